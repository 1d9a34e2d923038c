import type { Socket } from 'node:net';
import type { Clock } from '../contracts/clock.js';

/** How long a closing connection keeps reading what the client still sends. */
export const LINGER_MS = 2_000;
/**
 * How much it reads (and drops) at most before cutting the connection anyway: twice a peer
 * message's bound, so a body a little over its limit gets its 413; a flood is cut.
 */
export const LINGER_MAX_BYTES = 8 * 1024 * 1024;

/**
 * A lingering close for one server connection. When the server answers early and closes (a
 * 413 or 401 refused on the headers, with Connection: close) the client is often still
 * writing its body; closing the socket at once makes the kernel answer those bytes with a
 * reset, which can destroy the answer before the client has read it. Instead the server
 * half-closes (its answer and FIN are sent) and reads and drops what still arrives until the
 * client closes its side, LINGER_MS pass or LINGER_MAX_BYTES were dropped; only then is the
 * socket destroyed. Nothing read here is buffered.
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
      if (dropped > LINGER_MAX_BYTES) done();
    });
    this.once('end', done);
    this.once('close', () => timer.cancel());
    this.resume();
  };
}
