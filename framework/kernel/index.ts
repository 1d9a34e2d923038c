export * from './plugin.js';
export * from './host.js';
export * from './wiring-error.js';
export * from './config.js';
export * from './system-clock.js';
export * from './system-rng.js';
export * from './system-plugins.js';
export * from './catalog.js';
export * from './byte-files.js';
export * from './file-system.js';
export * from './durable-files.js';
// @internal, for the sibling packages' own files: the checksummed line format the stream WAL, the
// authority feed log and the Raft log share, and the set-aside and repair command their repairs use.
export { encodeChecksummedLine, scanChecksummedLines } from './checksummed-lines.js';
export type { LineDamage, LineScan, RecordCheck, ScannedRecord } from './checksummed-lines.js';
export { checkHostConfig, loadHostConfig } from './config-check.js';
export type { HostConfigShape } from './config-check.js';
export { keyTable } from './config-reference.js';
export { DirectoryLockedError, lockDirectory, processIsAlive } from './directory-lock.js';
export type { DirectoryLock, DirectoryLockOptions } from './directory-lock.js';
export { runHostProcess, withDataDirLock } from './host-process.js';
export type { HostProcessReport, HostProcessSpec, StartedHostProcess } from './host-process.js';
export { hostLogConfig, logOptions } from './log-config.js';
export { defineOptionlessPlugin } from './optionless-plugin.js';
export type { OptionlessPluginDefinition } from './optionless-plugin.js';
export { repairCommand } from './repair-command.js';
export { resolveOptional } from './resolve-optional.js';
export { readSecretFile, warnIfReadableByOthers } from './secret-files.js';
export { asideDirectory, setAside } from './set-aside.js';
