import type { ClusterStatus, MemberStatus } from './cluster-picture.js';

/** A member's version, build and Node.js version from its report; null for a member that did not answer. */
export function versionOf(m: MemberStatus): { version: string | null; build: string | null; nodeVersion: string | null } {
  const r = m.report;
  return { version: r?.version ?? null, build: r?.build ?? null, nodeVersion: r?.nodeVersion ?? null };
}

/**
 * When the members that answered run more than one version or build: which, and who runs each
 * ("0.1.0 (a1b2c3d4e5f6) on n1, n2; 0.2.0 (0f9e8d7c6b5a) on n3"). A mix is normal for the length of
 * a rolling upgrade and a risk beyond it (a member left on the old code), so it is a warning,
 * not a failure. Undefined when they all agree.
 */
export function versionMix(picture: ClusterStatus): string | undefined {
  const byVersion = new Map<string, string[]>();
  for (const m of picture.members) {
    const { version, build } = versionOf(m);
    if (version === null) continue;
    const key = `${version} (${shortBuild(build)})`;
    byVersion.set(key, [...(byVersion.get(key) ?? []), m.id]);
  }
  if (byVersion.size <= 1) return undefined;
  const groups = [...byVersion].map(([key, ids]) => `${key} on ${ids.join(', ')}`);
  return `members run different versions: ${groups.join('; ')}`;
}

/** A commit as git shows it short; `unknown` stays readable, and a member that did not say is `-`. */
export function shortBuild(build: string | null): string {
  if (build === null) return '-';
  return /^[0-9a-f]{40}$/.test(build) ? build.slice(0, 12) : build;
}
