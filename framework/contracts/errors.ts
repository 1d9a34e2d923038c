/**
 * The root of every error Baton raises on purpose. `code` is stable and machine-readable (the
 * HTTP layer maps codes to statuses); `message` says what was wrong and what to do about it.
 */
export class BatonError extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * A store (object store, audit store, metadata store) could not be read or written right now.
 * Transient by nature: the caller may retry. The API answers 503 and never guesses.
 */
export class StoreUnavailableError extends BatonError {
  constructor(
    readonly store: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super('store_unavailable', `${store} is unavailable: ${message}`, options);
  }
}
