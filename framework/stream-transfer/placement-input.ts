import { describeInvalidFields, HttpProblem, type InvalidField } from '@baton/http';
import type { StreamPlacement } from './labels.js';
import type { StreamMetadata } from './stream-metadata.js';

/**
 * Refuses (400, each field named) a placement that names a label no registered node carries:
 * such a requirement could never be met, and a misspelt preference or spread label would be
 * silently ignored. Reads the nodes (O(nodes)), never the streams.
 */
export function assertKnownLabels(state: StreamMetadata, placement: StreamPlacement): void {
  const known = new Set<string>();
  for (const node of state.nodes()) for (const key of Object.keys(node.labels ?? {})) known.add(key);
  const unknown = (key: string) => `no registered node carries the label "${key}"`;
  const fields: InvalidField[] = [];
  for (const part of ['require', 'prefer'] as const) {
    for (const key of Object.keys(placement[part] ?? {})) if (!known.has(key)) fields.push({ path: `placement.${part}.${key}`, message: unknown(key) });
  }
  if (placement.spread && !known.has(placement.spread.by)) fields.push({ path: 'placement.spread.by', message: unknown(placement.spread.by) });
  if (fields.length === 0) return;
  throw new HttpProblem({
    status: 400,
    type: 'invalid-input',
    detail: `invalid request body: ${describeInvalidFields(fields)}`,
    extra: { invalid_fields: fields },
  });
}
