// What an authority's audit record says changed: its own module, free of imports, so the
// dashboard's browser bundle can list the kinds without pulling in the state machine.

/**
 * Every move of an authority's home seals one record of its trail: a planned transfer's commit
 * (`planned_transfer`, ids are the transfer's key), and each raw transfer_authority command: the
 * one that gives an authority its first home (`authority_established`), a failover away from a
 * Dead home (`failover_transfer`, with its loss report) and any other raw move (`raw_transfer`).
 * Raw records are named `<commit_index>-0`.
 */
export const AUTHORITY_AUDIT_KINDS = ['planned_transfer', 'authority_established', 'failover_transfer', 'raw_transfer'] as const;
export type AuthorityAuditKind = (typeof AUTHORITY_AUDIT_KINDS)[number];

/** The actor of a raw move proposed with no principal named (a component of a member, a test). */
export const UNATTRIBUTED_RAW_ACTOR = 'system:transfer_authority';
