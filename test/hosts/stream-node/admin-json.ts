/** An admin call to a stream node with the cluster's token, answered as its status and parsed JSON body. */
export function adminJson(url: string, token: string) {
  return async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
}

/**
 * Whether no start time comes earlier than a pace of `perSecond` allows, a second's worth at
 * once excepted: the moves that broke it, with how long after the first each started.
 */
export function startedEarly(times: readonly number[], perSecond: number): { i: number; after: number; least: number }[] {
  const first = times[0] ?? 0;
  return times.map((at, i) => ({ i, after: at - first, least: (i - 1 - perSecond) * (1000 / perSecond) })).filter((m) => m.after < m.least);
}
