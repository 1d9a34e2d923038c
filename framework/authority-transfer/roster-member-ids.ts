/** Every member id a roster lists (all of them are this member's peers). */
export function rosterMemberIds(roster: unknown): string[] {
  if (!roster || typeof roster !== 'object') return [];
  return Object.values(roster as Record<string, { members?: unknown }>).flatMap((dc) =>
    dc?.members && typeof dc.members === 'object' ? Object.keys(dc.members) : [],
  );
}
