// The pino logger as Baton's LOGGER: the plugin hosts add, and the loggers themselves for code
// that logs outside a host (a command line, a test that drops every line).
export { pinoLoggerPlugin } from './plugin.js';
export { createPinoLogger, createSilentLogger, type LoggerOptions } from './pino-logger.js';
