import type { Socket } from 'node:net';
import type { Clock } from '@baton/contracts';

/** How long a closing connection keeps reading what the client still sends. */
export const LINGER_MS = 2_000;
/**
 * How much it reads (and drops) at most; past that it stops reading and waits, unread, for the
 * client to close or LINGER_MS to pass. The kernel's buffers take what the client still sends
 * meanwhile, and a client that reads its answer while it writes (Node, curl, undici) gets it.
 * Reading more would only churn memory: a thousand refused 1 MiB bodies read and dropped at
 * once made a gigabyte of garbage and stalled the event loop for the collection, long enough
 * to lose a Raft leadership.
 */
export const LINGER_MAX_BYTES = 256 * 1024;

/**
 * A lingering close for one server connection. When the server answers early and closes (a
 * 413 or 401 refused on the headers, with Connection: close) the client is often still
 * writing its body; closing the socket at once makes the kernel answer those bytes with a
 * reset, which can destroy the answer before the client has read it. Instead the server
 * half-closes (its answer and FIN are sent) and reads and drops what still arrives (at most
 * LINGER_MAX_BYTES, then it stops reading) until the client closes its side or LINGER_MS pass;
 * only then is the socket destroyed. Nothing read here is buffered.
 */
export function lingerOnClose(socket: Socket, clock: Clock): void {
  const destroySoon = (socket as Socket & { destroySoon?: () => void }).destroySoon;
  if (typeof destroySoon !== 'function') return;
  (socket as Socket & { destroySoon: () => void }).destroySoon = function lingeringDestroySoon(this: Socket) {
    if (this.destroyed) return;
    if (this.readableEnded || !this.readable) {
      destroySoon.call(this);
      return;
    }
    this.end();
    let dropped = 0;
    const timer = clock.setTimer(LINGER_MS, () => this.destroy());
    const done = () => {
      timer.cancel();
      this.destroy();
    };
    this.on('data', (chunk: Buffer) => {
      dropped += chunk.length;
      if (dropped > LINGER_MAX_BYTES) this.pause();
    });
    this.once('end', done);
    this.once('close', () => timer.cancel());
    this.resume();
  };
}
