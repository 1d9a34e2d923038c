import test from 'ava';
import type { ClusterStatus, MemberStatus } from '@baton/cluster';
import { shortBuild, versionMix } from '@baton/cli/internal/status/versions.js';

const COMMIT_A = 'a'.repeat(40);
const COMMIT_B = 'b'.repeat(40);

function member(id: string, version: string | null, build = COMMIT_A): MemberStatus {
  const report = version === null ? null : ({ version, build, nodeVersion: 'v20.19.0' } as NonNullable<MemberStatus['report']>);
  return { id, address: null, reachable: version !== null, liveness: null, report, error: version === null ? 'refused' : null };
}

const picture = (...members: MemberStatus[]) => ({ members }) as ClusterStatus;

test('one version and build everywhere is no mix, whatever the members that did not answer', (t) => {
  t.is(versionMix(picture(member('n1', '0.1.0'), member('n2', '0.1.0'), member('n3', null))), undefined);
});

test('members on different versions are named by version and build, as a warning line', (t) => {
  t.is(
    versionMix(picture(member('n1', '0.1.0'), member('n2', '0.2.0', COMMIT_B), member('n3', '0.1.0'))),
    `members run different versions: 0.1.0 (${'a'.repeat(12)}) on n1, n3; 0.2.0 (${'b'.repeat(12)}) on n2`,
  );
});

test('the same version built from two commits is a mix too: a member left on an older build', (t) => {
  t.regex(versionMix(picture(member('n1', '0.1.0'), member('n2', '0.1.0', COMMIT_B)))!, /0\.1\.0 \(a{12}\) on n1; 0\.1\.0 \(b{12}\) on n2/);
});

test('a build reads as a short commit; unknown and absent stay readable', (t) => {
  t.is(shortBuild(COMMIT_A), 'a'.repeat(12));
  t.is(shortBuild('unknown'), 'unknown');
  t.is(shortBuild(null), '-');
});
