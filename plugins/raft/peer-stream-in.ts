import type { IncomingMessage } from 'node:http';

/** Why reading a stream stopped. */
export type StreamEnd = 'ended' | 'too_large' | 'closed';

export interface InboundPeerStream {
  /** Resolves once the stream is over: the sender ended it, a frame was too large, or `close`. */
  readonly done: Promise<StreamEnd>;
  /** Stops reading (the server or the transport stops); the caller answers the request. */
  close(): void;
  /** Whether the server that accepted this stream has stopped listening. */
  serverStopped(): boolean;
}

const NEWLINE = 0x0a;

/**
 * Reads newline-terminated frames from a request body as they arrive and hands each to
 * `onFrame` in order. Works on bytes (a newline byte never occurs inside a UTF-8 sequence), so
 * a frame split across chunks is joined once, and a frame longer than `maxFrameBytes` ends the
 * stream before it is buffered whole.
 */
export function readPeerStream(
  req: IncomingMessage,
  maxFrameBytes: number,
  onFrame: (frame: string) => void,
): InboundPeerStream {
  let partial: Buffer[] = [];
  let partialBytes = 0;
  let over = false;
  let finish!: (end: StreamEnd) => void;
  const done = new Promise<StreamEnd>((resolve) => {
    finish = (end) => {
      if (over) return;
      over = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      req.off('error', onClose);
      req.pause();
      resolve(end);
    };
  });
  const onData = (chunk: Buffer) => {
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl >= 0 && !over; nl = chunk.indexOf(NEWLINE, start)) {
      const piece = chunk.subarray(start, nl);
      start = nl + 1;
      if (partialBytes + piece.length > maxFrameBytes) return finish('too_large');
      const frame =
        partial.length === 0
          ? piece.toString('utf8')
          : Buffer.concat([...partial, piece]).toString('utf8');
      partial = [];
      partialBytes = 0;
      if (frame.length > 0) onFrame(frame);
    }
    if (!over && start < chunk.length) {
      partialBytes += chunk.length - start;
      if (partialBytes > maxFrameBytes) return finish('too_large');
      partial.push(chunk.subarray(start));
    }
  };
  const onEnd = () => finish('ended');
  const onClose = () => finish('closed');
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('close', onClose);
  req.on('error', onClose);
  const socket = req.socket as unknown as { server?: { listening?: boolean } };
  return {
    done,
    close: () => finish('closed'),
    serverStopped: () => socket.server?.listening === false,
  };
}
