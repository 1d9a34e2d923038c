import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/**
 * The published OpenAPI document of a listener as a contract its answers are held to: the
 * status must be one the operation declares, the media type one it lists, and a JSON body must
 * validate against the declared schema (ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses it; the
 * document's own `$ref`s resolve against it). A request no operation matches (an unknown path)
 * is not checked: there is no contract to hold it to.
 */
export class ApiContract {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly operations: { method: string; template: string; pattern: RegExp; literal: number; operation: any }[] = [];

  constructor(private readonly document: { paths: Record<string, Record<string, any>>; components?: unknown }) {
    (addFormats as unknown as (ajv: Ajv2020) => void)(this.ajv);
    this.ajv.addSchema({ $id: DOCUMENT_ID, components: document.components ?? {} });
    for (const [template, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const pattern = new RegExp(`^${template.split(/\{[^}]+\}/).map(escapeRegExp).join('[^/]+')}$`);
        this.operations.push({ method: method.toUpperCase(), template, pattern, literal: template.replace(/\{[^}]+\}/g, '').length, operation });
      }
    }
    // A literal path wins over a template that also matches it (/ui/ before /ui/{asset}).
    this.operations.sort((a, b) => b.literal - a.literal);
  }

  /** The operation serving `method path`, as `METHOD template`, or undefined. */
  operationOf(method: string, path: string): { name: string; operation: any } | undefined {
    const lookup = method === 'HEAD' ? 'GET' : method;
    const found = this.operations.find((o) => o.method === lookup && o.pattern.test(path));
    return found && { name: `${found.method} ${found.template}`, operation: found.operation };
  }

  /** Every way an answer breaks the contract, one line each; empty when it keeps it. */
  check(method: string, path: string, answer: { status: number; contentType: string | null; body: string }): string[] {
    const served = this.operationOf(method, path);
    if (!served) return [];
    const where = `${served.name} -> ${answer.status}`;
    const response = served.operation.responses?.[String(answer.status)];
    if (!response) return [`${where}: status not declared (declared: ${Object.keys(served.operation.responses ?? {}).join(', ')})`];
    const content: Record<string, { schema?: unknown }> | undefined = response.content;
    if (!content || method === 'HEAD') return [];
    const type = (answer.contentType ?? '').split(';')[0].trim().toLowerCase();
    const media = content[type];
    if (!media) return [`${where}: content type ${JSON.stringify(type)} not declared (declared: ${Object.keys(content).join(', ')})`];
    if (!isJson(type) || media.schema === undefined) return [];
    let body: unknown;
    try {
      body = JSON.parse(answer.body);
    } catch {
      return [`${where}: the ${type} body is not JSON: ${answer.body.slice(0, 120)}`];
    }
    const validate = this.validator(`${served.name} ${answer.status} ${type}`, media.schema);
    if (validate(body)) return [];
    return (validate.errors ?? []).map((e) => `${where}: body${e.instancePath} ${e.message} (${JSON.stringify(e.params)})`);
  }

  private validator(key: string, schema: unknown): ValidateFunction {
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(rebased(schema) as object);
      this.validators.set(key, validate);
    }
    return validate;
  }
}

/** Thrown by `contractFetch` when an answer breaks its listener's published contract. */
export class ContractMismatchError extends Error {}

/**
 * A `fetch` that holds every answer to the OpenAPI document the answering listener publishes
 * (its `/openapi.json`, fetched once per origin), and throws ContractMismatchError on a
 * mismatch: a test that calls it fails on an answer its API does not document. The caller gets
 * the answer untouched.
 */
export function contractFetch(): typeof fetch {
  const contracts = new Map<string, Promise<ApiContract>>();
  const contractOf = (origin: string) => {
    let contract = contracts.get(origin);
    if (!contract) {
      contract = fetch(`${origin}/openapi.json`).then(async (r) => {
        if (r.status !== 200) throw new Error(`${origin}/openapi.json answered ${r.status}: no contract to check answers against`);
        return new ApiContract((await r.json()) as ConstructorParameters<typeof ApiContract>[0]);
      });
      contracts.set(origin, contract);
    }
    return contract;
  };
  return async (input, init) => {
    // Sent as given: a Request built here would stream the body chunked instead of sizing it.
    const response = await fetch(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const contract = await contractOf(url.origin);
    const mismatches = contract.check(method, url.pathname, {
      status: response.status,
      contentType: response.headers.get('content-type'),
      body: await response.clone().text(),
    });
    if (mismatches.length > 0) {
      throw new ContractMismatchError(`${method} ${url.pathname} broke the published contract:\n  ${mismatches.join('\n  ')}`);
    }
    return response;
  };
}

const DOCUMENT_ID = 'https://baton.invalid/openapi.json';

/** The schema with the document's local references pointed at the registered document. */
function rebased(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(rebased);
  if (schema === null || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, key === '$ref' && typeof value === 'string' && value.startsWith('#/') ? DOCUMENT_ID + value : rebased(value)]),
  );
}

function isJson(type: string): boolean {
  return type === 'application/json' || type.endsWith('+json');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
