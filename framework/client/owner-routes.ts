/**
 * Where a client sends the calls of each path first: learnt from a 409 not-owner hint or a 421
 * not-home answer after the fact, or ahead of time from an ownership feed. One instance may be
 * shared by a client's retry middleware and the feeds it watches.
 */
export class OwnerRoutes {
  private readonly origins = new Map<string, string>();

  /** The origin (`http://host:port`) calls of `pathname` go to, if one was learnt. */
  get(pathname: string): string | undefined {
    return this.origins.get(pathname);
  }

  /** Sends later calls of `pathname` to the origin of `url`. */
  set(pathname: string, url: string): void {
    this.origins.set(pathname, new URL(url).origin);
  }

  forget(pathname: string): void {
    this.origins.delete(pathname);
  }
}
