import { SystemClock } from '@baton/kernel';
import { authorityControlApi, cliCall } from '../api-client.js';
import type { Connection } from '../connection.js';
import type { TransferStatus } from './control-api.js';

/** How often the transfer's state is read while its request is in flight. */
const READ_EVERY_MS = 250;

/**
 * Reads the authority's transfer in flight until `stop` aborts, and calls `waiting` once, the
 * first time the node shows this very transfer (its key) waiting for the target to catch up.
 * A request refused at once is answered before any such reading, so it never says it waits.
 * A reading that fails is only skipped: the transfer's own answer is what reports trouble.
 */
export async function noteOnceWaiting(
  connection: Connection,
  authority: string,
  key: string,
  stop: AbortSignal,
  waiting: (status: TransferStatus) => void,
): Promise<void> {
  const clock = new SystemClock();
  const client = authorityControlApi(connection);
  while (!stop.aborted) {
    try {
      await clock.sleep(READ_EVERY_MS, stop);
      const body: TransferStatus = await cliCall(client.GET('/availability/v1/transfers/{authority}', { params: { path: { authority } } }));
      if (stop.aborted) return;
      if (body.id === key && body.state === 'AwaitingCatchUp') {
        waiting(body);
        return;
      }
    } catch {
      if (stop.aborted) return;
    }
  }
}
