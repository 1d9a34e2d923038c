/**
 * Runs tasks one at a time in arrival order. A put reads, then writes: two puts interleaving
 * between the read and the write could both believe an identity was free.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
