import type { z } from 'zod';

/** One line per zod issue, each prefixed by the dotted config path it concerns. */
export function formatIssues(issues: readonly z.core.$ZodIssue[], root: string): string {
  return issues
    .map((issue) => `  ${[root, ...issue.path.map(String)].filter(Boolean).join('.')}: ${issue.message}`)
    .join('\n');
}

export function issueList(issues: readonly z.core.$ZodIssue[], root: string) {
  return issues.map((issue) => ({
    path: [root, ...issue.path.map(String)].filter(Boolean).join('.'),
    message: issue.message,
  }));
}
