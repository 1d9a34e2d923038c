/**
 * Catching up with the leader's commit before answering "there is no such thing": a member that
 * has not applied a commit yet (it just restarted, or another member answered the write) would
 * otherwise say 404 for what exists. One linearizable read resolves only once this member has
 * applied everything committed before the read was issued, whichever consensus serves it.
 *
 * One read at a time, shared by every caller that needs one. A read already under way may have
 * taken its index before the caller's write committed, so a caller arriving then waits for the
 * next read, which all such callers share. A failed read (no leader in time) rejects its callers
 * with the consensus' error, a 503, rather than letting them guess.
 */
export class SharedCatchUp {
  private inFlight?: Promise<void>;
  private queued?: Promise<void>;

  constructor(private readonly read: () => Promise<unknown>) {}

  catchUp(): Promise<void> {
    if (!this.inFlight) {
      const reading = this.read().then(() => undefined);
      this.inFlight = reading;
      const clear = () => {
        if (this.inFlight === reading) this.inFlight = undefined;
      };
      reading.then(clear, clear);
      return reading;
    }
    this.queued ??= this.inFlight
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.catchUp();
      });
    return this.queued;
  }
}
