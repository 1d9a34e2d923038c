import { STATUS_CODES } from 'node:http';
import { BatonError } from '@baton/contracts';

/** The media type of every error body Baton's HTTP APIs send (RFC 9457). */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/**
 * Problem types are URNs under this prefix (`urn:baton:problem:store-unavailable`): stable
 * identifiers a client can switch on, without pretending to be dereferenceable pages.
 */
export const PROBLEM_TYPE_PREFIX = 'urn:baton:problem:';

/** The members RFC 9457 defines; extension members may not reuse these names. */
const STANDARD_MEMBERS = new Set(['type', 'title', 'status', 'detail', 'instance']);

/** A problem details document as it goes on the wire. */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  [extension: string]: unknown;
}

export interface HttpProblemInit {
  status: number;
  /** Short slug (`store-unavailable`) or a full URI; omitted means `about:blank`. */
  type?: string;
  /** Defaults to the status' reason phrase, as RFC 9457 asks for `about:blank`. */
  title?: string;
  /** What went wrong for this request, and what the caller can do about it. */
  detail: string;
  /** Extension members, e.g. `owner`, `address`, `epoch`, `transfer_id`. */
  extra?: Record<string, unknown>;
  /** Response headers that belong to the problem (Retry-After, WWW-Authenticate, Allow...). */
  headers?: Record<string, string>;
  cause?: unknown;
}

/**
 * An error that is already an HTTP answer. Handlers throw it; the problem middleware writes it
 * as `application/problem+json` with its status, headers and extension members.
 */
export class HttpProblem extends BatonError {
  readonly status: number;
  readonly type: string;
  readonly title: string;
  readonly detail: string;
  readonly extra: Readonly<Record<string, unknown>>;
  readonly headers: Readonly<Record<string, string>>;

  constructor(init: HttpProblemInit) {
    if (!Number.isInteger(init.status) || init.status < 400 || init.status > 599) {
      throw new RangeError(`HttpProblem status must be an integer from 400 to 599, got ${init.status}`);
    }
    for (const name of Object.keys(init.extra ?? {})) {
      if (STANDARD_MEMBERS.has(name)) {
        throw new RangeError(`HttpProblem extension member "${name}" clashes with a standard member`);
      }
    }
    const type = problemType(init.type);
    super(`http_${init.status}`, init.detail, { cause: init.cause });
    this.status = init.status;
    this.type = type;
    this.title = init.title ?? STATUS_CODES[init.status] ?? `HTTP ${init.status}`;
    this.detail = init.detail;
    this.extra = Object.freeze({ ...init.extra });
    this.headers = Object.freeze({ ...init.headers });
  }

  /** The wire document; `instance` identifies this occurrence (the request path). */
  body(instance?: string): ProblemBody {
    return {
      type: this.type,
      title: this.title,
      status: this.status,
      detail: this.detail,
      ...(instance === undefined ? {} : { instance }),
      ...this.extra,
    };
  }
}

function problemType(type: string | undefined): string {
  if (type === undefined || type === 'about:blank') return 'about:blank';
  if (/^[a-z][a-z0-9-]*$/.test(type)) return PROBLEM_TYPE_PREFIX + type;
  if (/^[a-z][a-z0-9+.-]*:/i.test(type)) return type;
  throw new RangeError(
    `HttpProblem type ${JSON.stringify(type)} is neither a lowercase slug nor an absolute URI`,
  );
}

/** Shorthands for the problems the shared HTTP pieces and both variants raise most. */
export const problems = {
  badRequest: (detail: string, extra?: Record<string, unknown>) =>
    new HttpProblem({ status: 400, type: 'bad-request', detail, extra }),
  notFound: (detail: string, extra?: Record<string, unknown>) =>
    new HttpProblem({ status: 404, type: 'not-found', detail, extra }),
  conflict: (detail: string, extra?: Record<string, unknown>, headers?: Record<string, string>) =>
    new HttpProblem({ status: 409, type: 'conflict', detail, extra, headers }),
  unprocessable: (detail: string, extra?: Record<string, unknown>) =>
    new HttpProblem({ status: 422, type: 'unprocessable', detail, extra }),
  /** 503 with Retry-After: the caller should come back, the answer is not a refusal. */
  unavailable: (detail: string, options: { retryAfterSeconds?: number; extra?: Record<string, unknown> } = {}) =>
    new HttpProblem({
      status: 503,
      type: 'unavailable',
      detail,
      extra: options.extra,
      headers: retryAfter(options.retryAfterSeconds ?? 1),
    }),
  gatewayTimeout: (detail: string, extra?: Record<string, unknown>) =>
    new HttpProblem({ status: 504, type: 'timeout', detail, extra }),
};

/** A Retry-After header in whole seconds (at least 1: a zero invites a hot retry loop). */
export function retryAfter(seconds: number): Record<string, string> {
  return { 'Retry-After': String(Math.max(1, Math.ceil(seconds))) };
}
