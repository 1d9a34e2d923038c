import { HttpRefusal } from './cli-errors.js';
import { inCliTerms } from './cli-terms.js';

/**
 * An error answer as an HttpRefusal (exit 1): the problem's detail (or title, or the text of a
 * body that is no problem) in CLI terms, its type as the code, and what to do about a 401, a
 * 403 or a control route the address does not serve.
 */
export function refusal(url: string, status: number, body: unknown): HttpRefusal {
  const problem = (body && typeof body === 'object' ? body : {}) as Record<string, unknown> & {
    type?: string;
    title?: string;
    detail?: string;
  };
  const why =
    problem.detail ?? problem.title ?? (typeof body === 'string' && body ? body : `HTTP ${status}`);
  const { origin, pathname } = new URL(url);
  return new HttpRefusal(
    problemCode(problem.type, status),
    `${origin} refused (${status}): ${inCliTerms(String(why))}${authHint(status)}${listenerHint(pathname, status, problem)}`,
    status,
    problem,
  );
}

/** The last segment of a problem type (`urn:baton:problem:not-owner` -> `not-owner`), else `http_<status>`. */
export function problemCode(type: string | undefined, status: number): string {
  return type && type !== 'about:blank' ? type.replace(/^.*[/#:]/, '') : `http_${status}`;
}

/**
 * A 404 of a control route that names nothing it looked for (no authority, no code) is the
 * route itself missing: the address is not an authority member's control listener, most often
 * its public one, which the roster and the cluster picture list.
 */
function listenerHint(path: string, status: number, problem: Record<string, unknown>): string {
  if (status !== 404 || !path.startsWith('/availability/v1/') || problem.authority !== undefined || problem.code !== undefined) return '';
  return " (this address serves no such route: give --url an authority member's control listener, not its public address; " +
    '"baton up --variant authority" prints both, labelled control and public)';
}

/** What to do about a 401 or 403, appended to the server's words. */
export function authHint(status: number): string {
  if (status === 401) return ' (give a token with --token or BATON_TOKEN)';
  if (status === 403) return ' (this token lacks the scope)';
  return '';
}
