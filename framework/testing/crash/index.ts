// The crash-consistency harness: record what a real store issues, rebuild every state a power cut can leave, reopen the store on each.
export * from './crash-checker.js';
export * from './crash-history.js';
export * from './crash-report.js';
export * from './crash-states.js';
export * from './recorded-operation.js';
export * from './recording-file-system.js';
