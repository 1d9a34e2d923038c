import { z } from 'zod';
import { PROBLEM_CONTENT_TYPE } from './problem.js';
import { problemSchema, sharedProblemExtensions } from './problem-schema.js';
import { templateParams } from './openapi-paths.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface ResponseSpec {
  description: string;
  /** The body's schema; for 4xx/5xx the Problem schema is used when omitted. */
  schema?: z.ZodType;
  /** Defaults to application/json (application/problem+json for errors); several when the body's type varies. */
  contentType?: string | string[];
  headers?: Record<string, { description: string; schema?: z.ZodType }>;
  /** A body as this answer sends it (checked against the schema by the document's lint). */
  example?: unknown;
  /**
   * The same answer as server-sent events (Accept: text/event-stream): each event named
   * `name`, its data the JSON of `schema`. OpenAPI 3.1 has no schema for an event stream's
   * items, so the media is a string and the events' schema rides in `x-events`.
   */
  events?: { name: string; schema: z.ZodType; example: unknown };
}

export interface HeaderParam {
  name: string;
  description: string;
  required?: boolean;
  schema?: z.ZodType;
}

/** One operation as a router declares it, next to the route that serves it. */
export interface OperationSpec {
  method: HttpMethod;
  /** OpenAPI template, parameters in braces: `/v1/streams/{stream}/records`. */
  path: string;
  summary: string;
  description?: string;
  /** Unique in the document: what a generated client names the call. */
  operationId: string;
  /** At least one; the first groups the operation in a generated client and the docs. */
  tags: string[];
  /** The bearer scope the route requires; adds the security requirement and 401/403. */
  scope?: string;
  /** A peer route: the caller is a member proving itself with its peer credential (401/403). */
  peer?: true;
  /**
   * Served without a credential (probes, the dashboard page, the document itself). Every
   * operation names its security: one of scope, peer or open, so none is open by omission.
   */
  open?: true;
  /** Object schemas whose properties are the path and query parameters. */
  params?: { path?: z.ZodObject; query?: z.ZodObject; headers?: HeaderParam[] };
  /** The JSON request body; adds the 400/413/415 answers the body reader gives. */
  requestBody?: z.ZodType;
  /** The body may be left out (the route reads it with `optional: true`). */
  requestBodyOptional?: true;
  /** A request body as a caller would send it. */
  requestExample?: unknown;
  /** Every status the operation answers, with what it means. A string is just a description. */
  responses: Record<number, ResponseSpec | string>;
}

export interface ApiInfo {
  title: string;
  version: string;
  description?: string;
  /** Defaults to the listener serving the document (`/`). */
  servers?: { url: string; description?: string }[];
  /** What each tag groups, shown by documentation tools. */
  tags?: Record<string, string>;
}

/** A JSON object of the OpenAPI document, as it is serialised. */
export type Json = Record<string, unknown>;

/** Answers the shared middleware gives on its own, added when an operation opts into them. */
const AUTH_RESPONSES: Record<number, string> = {
  401: 'Missing or unknown bearer token',
  403: 'The token lacks the required scope',
};
/** Any listener refuses a bearer token it does not know, even on a route that needs none. */
const OPEN_RESPONSES: Record<number, string> = {
  401: 'A bearer token was presented that this listener does not know, or a malformed Authorization header (send none here)',
};
const PEER_RESPONSES: Record<number, string> = {
  401: 'Missing or wrong peer credential (X-Baton-Member, X-Baton-Peer-Secret)',
  403: 'The request speaks for another member than the one authenticated',
};
const BODY_RESPONSES: Record<number, string> = {
  400: 'Invalid input: malformed JSON or invalid fields (listed in invalid_fields)',
  413: 'Request body too large',
  415: 'Request body is not JSON',
};

/**
 * An OpenAPI 3.1 document built from the operations routers declare. Schemas come from zod
 * (`z.toJSONSchema`, JSON Schema 2020-12, which OpenAPI 3.1 uses as is), so the validation a
 * handler runs and the schema a client reads are one definition. Declaring an operation twice,
 * or a path parameter without a declaration, is refused when it happens, not when scraped.
 */
export class ApiDocument {
  private readonly paths = new Map<string, Map<HttpMethod, Json>>();
  private readonly operationIds = new Set<string>();
  private readonly extensions = new Map<string, Json>(
    Object.entries(sharedProblemExtensions).map(([name, schema]) => [name, jsonSchema(schema, 'output')]),
  );

  constructor(private readonly info: ApiInfo) {}

  /**
   * Extension members a router's problems carry (`owner`, `epoch`...), added to the one Problem
   * component. A name declared twice must mean the same schema, or the document is refused.
   */
  problemExtensions(extensions: Record<string, z.ZodType>): this {
    for (const [name, schema] of Object.entries(extensions)) {
      const json = jsonSchema(schema, 'output');
      const known = this.extensions.get(name);
      if (known && JSON.stringify(known) !== JSON.stringify(json)) {
        throw new Error(`OpenAPI: problem extension ${name} is declared twice with different schemas`);
      }
      this.extensions.set(name, json);
    }
    return this;
  }

  operation(spec: OperationSpec): this {
    const methods = this.paths.get(spec.path) ?? new Map<HttpMethod, Json>();
    if (methods.has(spec.method)) {
      throw new Error(`OpenAPI: ${spec.method.toUpperCase()} ${spec.path} is declared twice`);
    }
    if (!/^[a-z][A-Za-z0-9]*$/.test(spec.operationId ?? '')) {
      throw new Error(`OpenAPI: ${spec.method.toUpperCase()} ${spec.path} needs an operationId in lowerCamelCase, got ${JSON.stringify(spec.operationId)}`);
    }
    if (this.operationIds.has(spec.operationId)) {
      throw new Error(`OpenAPI: operationId ${spec.operationId} is used twice`);
    }
    const operation = buildOperation(spec);
    this.operationIds.add(spec.operationId);
    methods.set(spec.method, operation);
    this.paths.set(spec.path, methods);
    return this;
  }

  /** Whether `method path` (OpenAPI template) is declared. */
  has(method: string, path: string): boolean {
    return this.paths.get(path)?.has(method.toLowerCase() as HttpMethod) ?? false;
  }

  /** The OpenAPI 3.1 document, paths sorted so it diffs cleanly. */
  toJSON(): Json {
    const paths: Json = {};
    const tags = new Set<string>();
    const schemes = new Set<string>();
    for (const path of [...this.paths.keys()].sort()) {
      const item: Json = {};
      for (const [method, operation] of this.paths.get(path)!) {
        item[method] = operation;
        for (const tag of operation.tags as string[]) tags.add(tag);
        for (const requirement of operation.security as Json[]) for (const scheme of Object.keys(requirement)) schemes.add(scheme);
      }
      paths[path] = item;
    }
    const problem = jsonSchema(problemSchema({}), 'output') as { properties: Json };
    problem.properties = { ...problem.properties, ...Object.fromEntries([...this.extensions].sort(([a], [b]) => (a < b ? -1 : 1))) };
    return {
      openapi: '3.1.0',
      info: { title: this.info.title, version: this.info.version, ...(this.info.description ? { description: this.info.description } : {}) },
      servers: this.info.servers ?? [{ url: '/', description: 'The listener serving this document' }],
      tags: [...tags].sort().map((name) => ({ name, ...(this.info.tags?.[name] ? { description: this.info.tags[name] } : {}) })),
      paths,
      components: {
        schemas: { Problem: problem },
        securitySchemes: Object.fromEntries(Object.entries(SECURITY_SCHEMES).filter(([name]) => schemes.has(name))),
      },
    };
  }
}

const SECURITY_SCHEMES: Record<string, Json> = {
  bearer: { type: 'http', scheme: 'bearer', description: 'A configured token; each route names the scope it needs' },
  peerMember: { type: 'apiKey', in: 'header', name: 'X-Baton-Member', description: 'The member a peer request speaks for' },
  peerSecret: { type: 'apiKey', in: 'header', name: 'X-Baton-Peer-Secret', description: "That member's own secret; peers hold only its SHA-256 digest" },
};

function buildOperation(spec: OperationSpec): Json {
  const where = `${spec.method.toUpperCase()} ${spec.path}`;
  const security = [spec.scope !== undefined, spec.peer === true, spec.open === true].filter(Boolean).length;
  if (security !== 1) {
    throw new Error(`OpenAPI: ${where} must name exactly one of scope, peer or open (its security), not ${security}`);
  }
  if (!spec.tags?.length) throw new Error(`OpenAPI: ${where} needs at least one tag`);
  const parameters = [...pathParameters(spec, where), ...queryParameters(spec), ...headerParameters(spec)];
  const responses: Record<number, ResponseSpec | string> = { ...spec.responses };
  if (spec.open) for (const [s, d] of Object.entries(OPEN_RESPONSES)) responses[+s] ??= d;
  if (spec.scope !== undefined) for (const [s, d] of Object.entries(AUTH_RESPONSES)) responses[+s] ??= d;
  if (spec.peer) for (const [s, d] of Object.entries(PEER_RESPONSES)) responses[+s] ??= d;
  if (spec.requestBody !== undefined) for (const [s, d] of Object.entries(BODY_RESPONSES)) responses[+s] ??= d;
  if (Object.keys(responses).length === 0) throw new Error(`OpenAPI: ${where} declares no response`);
  return {
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    operationId: spec.operationId,
    tags: spec.tags,
    security: spec.scope !== undefined ? [{ bearer: [spec.scope] }] : spec.peer ? [{ peerMember: [], peerSecret: [] }] : [],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(spec.requestBody
      ? {
          requestBody: {
            required: !spec.requestBodyOptional,
            content: {
              'application/json': {
                schema: jsonSchema(spec.requestBody, 'input'),
                ...(spec.requestExample === undefined ? {} : { example: spec.requestExample }),
              },
            },
          },
        }
      : {}),
    responses: Object.fromEntries(
      Object.entries(responses).map(([status, response]) => [status, buildResponse(Number(status), response, where)]),
    ),
  };
}

function buildResponse(status: number, response: ResponseSpec | string, where: string): Json {
  if (!Number.isInteger(status) || status < 100 || status > 599) {
    throw new Error(`OpenAPI: ${where} declares status ${status}, which is not an HTTP status`);
  }
  const spec: ResponseSpec = typeof response === 'string' ? { description: response } : response;
  const isError = status >= 400;
  const contentTypes = [spec.contentType ?? (isError ? PROBLEM_CONTENT_TYPE : 'application/json')].flat();
  const noBody = status === 204 || status === 304 || (status >= 300 && status < 400);
  if (!noBody && !isError && !spec.schema) {
    throw new Error(`OpenAPI: ${where} answers ${status} with a body but declares no schema for it`);
  }
  const schema = spec.schema ? jsonSchema(spec.schema, 'output') : { $ref: '#/components/schemas/Problem' };
  const headers = { ...STATUS_HEADERS[status], ...spec.headers };
  const media = { schema, ...(spec.example === undefined ? {} : { example: spec.example }) };
  return {
    description: spec.description,
    ...(Object.keys(headers).length > 0
      ? {
          headers: Object.fromEntries(
            Object.entries(headers).map(([name, h]) => [
              name,
              { description: h.description, schema: h.schema ? jsonSchema(h.schema, 'output') : { type: 'string' } },
            ]),
          ),
        }
      : {}),
    ...(noBody ? {} : { content: { ...Object.fromEntries(contentTypes.map((type) => [type, media])), ...eventStreamMedia(spec.events) } }),
  };
}

function eventStreamMedia(events: ResponseSpec['events']): Json {
  if (!events) return {};
  return {
    'text/event-stream': {
      schema: {
        type: 'string',
        description: `Server-sent events: each \`event: ${events.name}\` carries as its data the JSON of x-events.${events.name}; comment lines are heartbeats`,
      },
      example: `event: ${events.name}\ndata: ${JSON.stringify(events.example)}\n\n`,
      'x-events': { [events.name]: jsonSchema(events.schema, 'output') },
    },
  };
}

/** Headers that come with a status wherever it is answered. */
const STATUS_HEADERS: Record<number, Record<string, { description: string; schema?: z.ZodType }>> = {
  308: { Location: { description: 'Where the resource is now' } },
  429: { 'Retry-After': { description: 'Seconds to wait before asking again', schema: z.string().regex(/^\d+$/) } },
  503: { 'Retry-After': { description: 'Seconds to wait before retrying', schema: z.string().regex(/^\d+$/) } },
};

function pathParameters(spec: OperationSpec, where: string): Json[] {
  const names = templateParams(spec.path);
  const shape = spec.params?.path ? objectSchema(spec.params.path) : undefined;
  const declared = Object.keys(shape?.properties ?? {});
  for (const name of names) {
    if (!declared.includes(name)) {
      throw new Error(`OpenAPI: ${where} has path parameter {${name}} without a schema in params.path`);
    }
  }
  for (const name of declared) {
    if (!names.includes(name)) throw new Error(`OpenAPI: ${where} declares path parameter ${name} not in its path`);
  }
  return names.map((name) => ({ name, in: 'path', required: true, schema: shape!.properties[name] }));
}

function queryParameters(spec: OperationSpec): Json[] {
  if (!spec.params?.query) return [];
  const shape = objectSchema(spec.params.query);
  return Object.entries(shape.properties).map(([name, schema]) => ({
    name,
    in: 'query',
    required: shape.required.includes(name),
    schema,
  }));
}

function headerParameters(spec: OperationSpec): Json[] {
  return (spec.params?.headers ?? []).map((h) => ({
    name: h.name,
    in: 'header',
    description: h.description,
    required: h.required ?? false,
    schema: h.schema ? jsonSchema(h.schema, 'input') : { type: 'string' },
  }));
}

function objectSchema(schema: z.ZodObject): { properties: Record<string, Json>; required: string[] } {
  const json = jsonSchema(schema, 'input') as { properties?: Record<string, Json>; required?: string[] };
  return { properties: json.properties ?? {}, required: json.required ?? [] };
}

/** JSON Schema 2020-12 for a zod schema, without the `$schema` marker OpenAPI does not want inline. */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json;
  // A local reference (`#`, `#/$defs/...`) would resolve against the OpenAPI document's root,
  // not this schema, and point nowhere: refuse rather than publish a broken document.
  if ('$defs' in rest || hasLocalRef(rest)) {
    throw new Error('OpenAPI: a recursive or self-referencing zod schema cannot be inlined; simplify it');
  }
  return rest;
}

function hasLocalRef(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasLocalRef);
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(
    ([key, inner]) => (key === '$ref' && typeof inner === 'string' && inner.startsWith('#')) || hasLocalRef(inner),
  );
}
