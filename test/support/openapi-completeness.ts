/**
 * What a published OpenAPI document leaves a client to guess, one line per gap: an operation
 * without an operationId, a tag, a summary or its security; a 2xx body without a schema or an
 * example; a request body without an example; an error answer that is not the shared Problem.
 * Empty when a generated client needs nothing but the document.
 */
export function documentGaps(document: { paths: Record<string, Record<string, any>> }): string[] {
  const gaps: string[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const where = `${method.toUpperCase()} ${path}`;
      if (!operation.operationId) gaps.push(`${where}: no operationId`);
      if (!operation.tags?.length) gaps.push(`${where}: no tag`);
      if (!operation.summary) gaps.push(`${where}: no summary`);
      if (!Array.isArray(operation.security)) gaps.push(`${where}: no security`);
      for (const [type, media] of Object.entries<any>(operation.requestBody?.content ?? {})) {
        if (media.example === undefined) gaps.push(`${where}: request body ${type} has no example`);
      }
      const statuses = Object.keys(operation.responses ?? {});
      if (!statuses.some((s) => s.startsWith('4'))) gaps.push(`${where}: declares no 4xx answer`);
      for (const status of statuses) {
        const content = Object.entries<any>(operation.responses[status].content ?? {});
        const code = Number(status);
        if (code >= 400) {
          if (content.length === 0 || content.some(([, media]) => media.schema?.$ref !== '#/components/schemas/Problem')) {
            gaps.push(`${where} -> ${status}: not the shared Problem`);
          }
        } else if (code >= 200 && code < 300 && code !== 204) {
          if (content.length === 0) gaps.push(`${where} -> ${status}: no body declared`);
          for (const [type, media] of content) {
            if (!media.schema) gaps.push(`${where} -> ${status} ${type}: no schema`);
            if (media.example === undefined) gaps.push(`${where} -> ${status} ${type}: no example`);
          }
        }
      }
    }
  }
  return gaps;
}
