// The koa pieces both variants share: problem+json errors, auth scopes, JSON bodies with a
// limit, validation, idempotency keys, request ids, the listener lifecycle, Prometheus metrics
// and the OpenAPI document.
export * from './problem.js';
export * from './problem-mapping.js';
export * from './problem-middleware.js';
export * from './invalid-fields.js';
export * from './validate.js';
export * from './json-body.js';
export * from './auth.js';
export * from './state.js';
export * from './request-context.js';
export * from './idempotency-key.js';
export * from './routes.js';
export * from './api-app.js';
export * from './http-server.js';
export * from './metrics.js';
export * from './metrics-sources.js';
export * from './metrics-http.js';
export * from './metrics-plugin.js';
export * from './openapi.js';
export * from './openapi-paths.js';
export * from './openapi-routes.js';
export * from './openapi-coverage.js';
export * from './problem-schema.js';
export * from './peer-auth.js';
export * from './peer-auth-plugin.js';
export * from './json-bounds.js';
export { buildInfo, type BuildInfo } from './build-info.js';
export { admissionLimitsSchema } from './connection-admission.js';
export { consensusFactsOf } from './consensus-facts.js';
export { processEventLoopDelay } from './event-loop-delay.js';
export { listenerTlsSchema, readTlsMaterial } from './listener-tls.js';
export { decimalQuery } from './query-number.js';
export { tracingOptions, tracingPlugin } from './tracing-plugin.js';
export { TRACING, childSpan, traceHeaders } from './tracing.js';
export type { Tracing } from './tracing.js';
