// A linearizability checker in the manner of Porcupine, and the models it checks against.
export * from './history.js';
export * from './model.js';
export * from './checker.js';
export * from './kv-register-model.js';
