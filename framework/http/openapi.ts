import { z } from 'zod';
import { PROBLEM_CONTENT_TYPE } from './problem.js';
import { templateParams } from './openapi-paths.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface ResponseSpec {
  description: string;
  /** The body's schema; for 4xx/5xx the Problem schema is used when omitted. */
  schema?: z.ZodType;
  /** Defaults to application/json (application/problem+json for errors). */
  contentType?: string;
  headers?: Record<string, { description: string; schema?: z.ZodType }>;
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
  operationId?: string;
  tags?: string[];
  /** The bearer scope the route requires; adds the security requirement and 401/403. */
  scope?: string;
  /** A peer route: the caller is a member proving itself with its peer credential (401/403). */
  peer?: true;
  /** Object schemas whose properties are the path and query parameters. */
  params?: { path?: z.ZodObject; query?: z.ZodObject; headers?: HeaderParam[] };
  /** The JSON request body; adds the 400/413/415 answers the body reader gives. */
  requestBody?: z.ZodType;
  /** Every status the operation answers, with what it means. A string is just a description. */
  responses: Record<number, ResponseSpec | string>;
}

export interface ApiInfo {
  title: string;
  version: string;
  description?: string;
  servers?: { url: string; description?: string }[];
}

type Json = Record<string, unknown>;

/** The problem+json body every error answer carries (RFC 9457). */
const problemSchema: Json = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail'],
  properties: {
    type: { type: 'string', description: 'URI identifying the kind of problem (urn:baton:problem:...).' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string', description: 'What went wrong for this request and what to do.' },
    instance: { type: 'string' },
    request_id: { type: 'string' },
  },
  additionalProperties: true,
};

/** Answers the shared middleware gives on its own, added when an operation opts into them. */
const AUTH_RESPONSES: Record<number, string> = {
  401: 'Missing or unknown bearer token',
  403: 'The token lacks the required scope',
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

  constructor(private readonly info: ApiInfo) {}

  operation(spec: OperationSpec): this {
    const methods = this.paths.get(spec.path) ?? new Map<HttpMethod, Json>();
    if (methods.has(spec.method)) {
      throw new Error(`OpenAPI: ${spec.method.toUpperCase()} ${spec.path} is declared twice`);
    }
    if (spec.operationId !== undefined) {
      if (this.operationIds.has(spec.operationId)) {
        throw new Error(`OpenAPI: operationId ${spec.operationId} is used twice`);
      }
      this.operationIds.add(spec.operationId);
    }
    methods.set(spec.method, buildOperation(spec));
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
    for (const path of [...this.paths.keys()].sort()) {
      const item: Json = {};
      for (const [method, operation] of this.paths.get(path)!) item[method] = operation;
      paths[path] = item;
    }
    return {
      openapi: '3.1.0',
      info: { title: this.info.title, version: this.info.version, description: this.info.description },
      ...(this.info.servers ? { servers: this.info.servers } : {}),
      paths,
      components: {
        schemas: { Problem: problemSchema },
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          peerMember: { type: 'apiKey', in: 'header', name: 'X-Baton-Member', description: 'The member a peer request speaks for' },
          peerSecret: { type: 'apiKey', in: 'header', name: 'X-Baton-Peer-Secret', description: "That member's own secret; peers hold only its SHA-256 digest" },
        },
      },
    };
  }
}

function buildOperation(spec: OperationSpec): Json {
  const where = `${spec.method.toUpperCase()} ${spec.path}`;
  const parameters = [...pathParameters(spec, where), ...queryParameters(spec), ...headerParameters(spec)];
  const responses: Record<number, ResponseSpec | string> = { ...spec.responses };
  if (spec.scope !== undefined) for (const [s, d] of Object.entries(AUTH_RESPONSES)) responses[+s] ??= d;
  if (spec.peer) for (const [s, d] of Object.entries(PEER_RESPONSES)) responses[+s] ??= d;
  if (spec.requestBody !== undefined) for (const [s, d] of Object.entries(BODY_RESPONSES)) responses[+s] ??= d;
  if (Object.keys(responses).length === 0) throw new Error(`OpenAPI: ${where} declares no response`);
  return {
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    ...(spec.operationId ? { operationId: spec.operationId } : {}),
    ...(spec.tags ? { tags: spec.tags } : {}),
    ...(spec.scope !== undefined ? { security: [{ bearer: [spec.scope] }] } : {}),
    ...(spec.peer ? { security: [{ peerMember: [], peerSecret: [] }] } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(spec.requestBody
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: jsonSchema(spec.requestBody, 'input') } },
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
  const contentType = spec.contentType ?? (isError ? PROBLEM_CONTENT_TYPE : 'application/json');
  const schema = spec.schema
    ? jsonSchema(spec.schema, 'output')
    : isError
      ? { $ref: '#/components/schemas/Problem' }
      : undefined;
  const noBody = status === 204 || status === 304 || (!isError && !spec.schema && spec.contentType === undefined);
  return {
    description: spec.description,
    ...(spec.headers
      ? {
          headers: Object.fromEntries(
            Object.entries(spec.headers).map(([name, h]) => [
              name,
              { description: h.description, schema: h.schema ? jsonSchema(h.schema, 'output') : { type: 'string' } },
            ]),
          ),
        }
      : {}),
    ...(noBody ? {} : { content: { [contentType]: schema ? { schema } : {} } }),
  };
}

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
