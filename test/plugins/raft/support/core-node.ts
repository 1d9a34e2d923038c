import { RaftCore, type RaftConfig } from '@baton/plugin-raft/internal/core/raft.js';
import { MemoryLogStorage } from '@baton/plugin-raft/internal/core/storage.js';
import { mustSync } from '@baton/plugin-raft/internal/core/must-sync.js';
import type {
  ConfChange,
  Entry,
  HardState,
  Message,
  Ready,
} from '@baton/plugin-raft/internal/core/types.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';

/** What the test state machine snapshots: the applied index and the hash chain up to it. */
export interface DigestState {
  index: number;
  digest: string;
  voters: string[];
}

/** FNV-1a over the previous digest and the entry, so two members agree iff they applied the same log. */
export function chain(previous: string, e: Entry): string {
  const text = `${previous}|${e.index}/${e.term}/${e.type}/${JSON.stringify(e.data)}`;
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
}

export interface AppliedRecord {
  entry: Entry;
  digest: string;
  voters: string[];
}

/**
 * A core with its driver duties done synchronously, for tests: its durable storage (the
 * MemoryLogStorage is the disk: what was persisted survives `restart`, nothing else does) and
 * a state machine that folds applied entries into a hash chain.
 */
export class CoreNode {
  core!: RaftCore;
  disk: MemoryLogStorage;
  state!: DigestState;
  /** Every apply since the last (re)start, for the safety checks. */
  applied: AppliedRecord[] = [];
  restarts = 0;

  constructor(
    readonly id: string,
    bootstrapVoters: string[],
    private readonly rng: SeededRng,
    private readonly options: Omit<RaftConfig, 'id' | 'storage' | 'rng'> = {},
  ) {
    this.disk = new MemoryLogStorage(bootstrapVoters);
    this.boot();
  }

  private boot(): void {
    const snap = this.disk.snapshot();
    const data = snap.data as DigestState | null;
    this.state = data
      ? { ...data, voters: [...snap.meta.voters] }
      : { index: 0, digest: '0', voters: [...snap.meta.voters] };
    this.core = new RaftCore({ id: this.id, storage: this.disk, rng: this.rng, ...this.options });
  }

  /** A commit-only hard state not written yet (see mustSync). */
  private deferredHardState: HardState | undefined;

  /**
   * What `baton repair raft` leaves after damage: the durable log cut after `keepTo`, the hard
   * state kept (commit clamped to what is left), and `catchUpTo` at the old end of the log, so
   * the member holds back its vote until a leader matched its log past what it lost. Restarts.
   */
  repair(keepTo: number): void {
    const old = this.disk;
    const disk = new MemoryLogStorage(old.snapshot().meta.voters);
    if (old.snapshot().meta.index > 0) disk.applySnapshot(old.snapshot());
    disk.append(old.entries(old.firstIndex(), keepTo + 1));
    const hs = old.hardState();
    disk.setHardState({ ...hs, commit: Math.min(hs.commit, keepTo), catchUpTo: old.lastIndex() });
    this.disk = disk;
    this.restart();
  }

  /** Crash and start again from the disk: whatever was not persisted is gone. */
  restart(): void {
    this.restarts++;
    this.deferredHardState = undefined;
    this.applied = [];
    this.boot();
  }

  /** Why the last `processReady` crashed the node, if it did. */
  crashed: 'after-persist' | 'before-persist' | undefined;

  /**
   * Persists, applies and advances one Ready; returns it (its messages are the caller's to
   * send, unless `sendEarly` already sent them). `beforePersist` sees it first;
   * `crashAfterPersist` writes the disk, then crashes before anything is sent or applied. With
   * `sendEarly`, a Ready whose messages may leave first (a leader's) hands them to it before
   * the disk write, and `crashBeforePersist` then crashes before writing anything.
   */
  processReady(
    options: {
      crashAfterPersist?: boolean;
      crashBeforePersist?: boolean;
      sendEarly?: (messages: Message[]) => void;
      beforePersist?: (rd: Ready) => void;
    } = {},
  ): Ready | undefined {
    this.crashed = undefined;
    if (!this.core.hasReady()) return undefined;
    const rd = this.core.ready();
    if (rd.messagesFirst && options.sendEarly) {
      options.sendEarly(rd.messages);
      if (options.crashBeforePersist) {
        this.crashed = 'before-persist';
        this.restart();
        return undefined;
      }
    }
    options.beforePersist?.(rd);
    // As the driver does: a Ready that only moves the commit index is not written; its hard
    // state goes with the next write that must be synced (a crash before then loses it).
    if (mustSync(rd, this.disk.hardState())) {
      if (rd.snapshot) this.disk.applySnapshot(rd.snapshot);
      this.disk.append(rd.entries);
      const hs = rd.hardState ?? this.deferredHardState;
      if (hs) this.disk.setHardState(hs);
      this.deferredHardState = undefined;
    } else if (rd.hardState) {
      this.deferredHardState = rd.hardState;
    }
    if (options.crashAfterPersist) {
      this.crashed = 'after-persist';
      this.restart();
      return undefined;
    }
    if (rd.snapshot) {
      const data = rd.snapshot.data as DigestState;
      this.state = { index: data.index, digest: data.digest, voters: [...rd.snapshot.meta.voters] };
    }
    for (const e of rd.committedEntries) this.apply(e);
    this.core.advance();
    return rd;
  }

  private apply(e: Entry): void {
    if (e.index !== this.state.index + 1) {
      throw new Error(
        `${this.id} applies ${e.index} after ${this.state.index}: a gap in the applied log`,
      );
    }
    if (e.type === 'conf') this.state.voters = [...(e.data as ConfChange).voters];
    this.state = { index: e.index, digest: chain(this.state.digest, e), voters: this.state.voters };
    this.applied.push({ entry: e, digest: this.state.digest, voters: this.state.voters });
  }

  /** Snapshots the applied state and drops the log up to `compactTo` (<= applied). */
  compact(compactTo: number): void {
    const at = this.state.index;
    if (at > this.disk.snapshot().meta.index) {
      this.disk.createSnapshot(at, this.state.voters, {
        index: at,
        digest: this.state.digest,
        voters: this.state.voters,
      });
    }
    this.disk.compact(Math.min(compactTo, this.disk.snapshot().meta.index));
  }

  step(m: Message): void {
    this.core.step(m);
  }
}
