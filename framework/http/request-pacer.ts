import type { IncomingMessage, ServerResponse } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers';

/** New requests on unproven connections handled in one turn of the event loop; the rest wait for the next turns. */
export const DEFAULT_REQUESTS_PER_TURN = 32;

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Spreads a burst of new requests over turns of the event loop. A thousand clients that send
 * at once get their requests parsed in one poll phase; handled there and then, even refusing
 * each (a few hundred microseconds of middleware and an answer) held the loop for a quarter of
 * a second (up to 0.85 s under load, as long as a Raft election timeout), and the member's own timers (heartbeats, lease
 * renewals) waited behind it. Here at most `perTurn` requests start per turn, in arrival
 * order, and the rest wait for the next turns, after the timers have run. Requests on a
 * proven connection (a member's, or a client's that already presented its token) never wait:
 * a flood of strangers cannot queue the cluster's own traffic.
 */
export class RequestPacer {
  private startedThisTurn = 0;
  private turnScheduled = false;
  private readonly waiting: [IncomingMessage, ServerResponse][] = [];

  constructor(
    private readonly handler: Handler,
    private readonly isProven: (req: IncomingMessage) => boolean,
    private readonly perTurn = DEFAULT_REQUESTS_PER_TURN,
  ) {}

  /** Requests waiting for a later turn. */
  get queued(): number {
    return this.waiting.length;
  }

  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    if (this.isProven(req)) return this.handler(req, res);
    if (this.waiting.length === 0 && this.startedThisTurn < this.perTurn) {
      this.start(req, res);
      return;
    }
    this.waiting.push([req, res]);
    this.scheduleTurn();
  };

  private start(req: IncomingMessage, res: ServerResponse): void {
    this.startedThisTurn += 1;
    this.scheduleTurn();
    // A client that went away while it waited has no one left to answer.
    if (req.socket.destroyed) return;
    this.handler(req, res);
  }

  private scheduleTurn(): void {
    if (this.turnScheduled) return;
    this.turnScheduled = true;
    nextTurn(() => {
      this.turnScheduled = false;
      this.startedThisTurn = 0;
      while (this.waiting.length > 0 && this.startedThisTurn < this.perTurn) {
        const [req, res] = this.waiting.shift()!;
        this.start(req, res);
      }
    });
  }
}
