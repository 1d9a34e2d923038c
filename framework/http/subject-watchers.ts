import type { Context } from 'koa';
import type { EventStream, EventStreams } from './event-stream.js';

/** What changed: some subjects, or any of them (updates were missed, e.g. a snapshot was installed). */
export type ChangedSubjects = Iterable<string> | 'all';

export interface SubjectWatchersOptions<Event> {
  /** The SSE event name every update is sent under. */
  event: string;
  /** The subject's state as its watchers see it; undefined while it does not exist. */
  eventOf(subject: string): Event | undefined;
  /** Subscribes to changes while anyone watches; answers the unsubscribe. */
  subscribe(changed: (subjects: ChangedSubjects) => void): () => void;
}

interface Watched {
  /** The last event sent to this subject's watchers, as encoded: nothing is sent twice. */
  last: string;
  watchers: Set<EventStream>;
}

/**
 * Watchers of subjects (streams, authorities), each told the subject's state when it connects and
 * again whenever a change makes it differ from what they were last sent. On a change only the
 * subjects it names are looked at, and only when watched; a change naming none looks at the
 * watched subjects, never at every subject there is. No subscription is held while no one watches.
 */
export class SubjectWatchers<Event> {
  private readonly watched = new Map<string, Watched>();
  private unsubscribe?: () => void;

  constructor(
    readonly streams: EventStreams,
    private readonly options: SubjectWatchersOptions<Event>,
  ) {}

  /** Answers `ctx` with the subject's feed; call once the subject is known to exist. */
  watch(ctx: Context, subject: string): void {
    const watcher = this.streams.accept(ctx);
    let watched = this.watched.get(subject);
    if (watched) {
      // Bring the others up to date first, so every watcher of the subject saw the same last event.
      this.publish(subject, watched);
    } else {
      watched = { last: '', watchers: new Set() };
      this.watched.set(subject, watched);
    }
    const event = this.options.eventOf(subject);
    if (event !== undefined) {
      watched.last = JSON.stringify(event);
      watcher.send(this.options.event, event);
    }
    watched.watchers.add(watcher);
    watcher.onClose(() => this.forget(subject, watcher));
    this.unsubscribe ??= this.options.subscribe((subjects) => this.changed(subjects));
  }

  /** Subjects watched now (for tests and metrics). */
  get subjects(): number {
    return this.watched.size;
  }

  private changed(subjects: ChangedSubjects): void {
    if (subjects === 'all') {
      for (const [subject, watched] of this.watched) this.publish(subject, watched);
      return;
    }
    for (const subject of subjects) {
      const watched = this.watched.get(subject);
      if (watched) this.publish(subject, watched);
    }
  }

  private publish(subject: string, watched: Watched): void {
    const event = this.options.eventOf(subject);
    if (event === undefined) return;
    const encoded = JSON.stringify(event);
    if (encoded === watched.last) return;
    watched.last = encoded;
    for (const watcher of watched.watchers) watcher.send(this.options.event, event);
  }

  private forget(subject: string, watcher: EventStream): void {
    const watched = this.watched.get(subject);
    if (!watched) return;
    watched.watchers.delete(watcher);
    if (watched.watchers.size > 0) return;
    this.watched.delete(subject);
    if (this.watched.size === 0) {
      this.unsubscribe?.();
      this.unsubscribe = undefined;
    }
  }
}
