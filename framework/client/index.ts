// Typed clients of both variants' HTTP APIs, generated from the OpenAPI documents the
// listeners serve (openapi-typescript + openapi-fetch).
export * from './clients.js';
export { IDEMPOTENCY_KEY_HEADER, idempotencyKeyMiddleware, retryMiddleware, type RetryOptions } from './retry-middleware.js';
export type { components as StreamNodeComponents, operations as StreamNodeOperations } from './generated/stream-node.js';
export type { components as AuthorityControlComponents, operations as AuthorityControlOperations } from './generated/authority-control.js';
export type { components as AuthorityPublicComponents, operations as AuthorityPublicOperations } from './generated/authority-public.js';
export { OwnerRoutes } from './owner-routes.js';
export { OwnershipWatch, WatchRefusedError, watchAuthorityOwnership, watchStreamOwnership } from './ownership-watch.js';
export type { AuthorityOwnership, StreamOwnership, WatchOptions } from './ownership-watch.js';
export { StreamClient } from './stream-client.js';
export type { AppendAnswer, AuditPage, FailoverAnswer, KeyedWrite, NodeGuard, ReadAnswer, RebalanceAnswer, StreamAnswer, StreamClientOptions, StreamRequestBody, StreamPage, TransferGuard } from './stream-client.js';
export { StreamApiError } from './stream-api-error.js';
