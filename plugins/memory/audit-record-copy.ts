/** Shared by every store through the contract, so all of them copy, refuse and compare records alike. */
export { checkAuditRecord, copyAuditRecord, differingAuditFields as differingFields } from '@baton/contracts';
