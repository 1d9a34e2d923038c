import type { StreamCommand, StreamResult } from '@baton/stream-transfer/internal/commands.js';
import type { StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import { StreamStateMachine } from '@baton/stream-transfer/internal/state-machine.js';

/** A state machine applied by hand, one log index per command, as a replica would. */
export class AppliedLog {
  readonly machine = new StreamStateMachine();
  state: StreamMetadata = this.machine.initial();
  private index = 0;

  apply(command: StreamCommand): StreamResult {
    this.index += 1;
    return this.machine.apply(this.state, command, { position: { term: 1, index: this.index }, voters: ['m1'] });
  }

  /** Applies and fails loudly if rejected: for the setup steps of a test. */
  must(command: StreamCommand): StreamResult {
    const result = this.apply(command);
    if (!result.ok) throw new Error(`setup command ${command.type} rejected: ${result.message}`);
    return result;
  }

  nodes(...specs: [string, number][]): this {
    for (const [node, slots] of specs) this.must({ type: 'register-node', node, address: `http://${node}`, slots });
    return this;
  }

  /** Closes and completes the pending transfer of `stream`, as the source's watcher would. */
  settle(stream: string): void {
    const pending = this.state.transfer(stream)!;
    const record = this.state.stream(stream)!;
    this.must({ type: 'close', stream, node: pending.source, epoch: record.epoch, tail: record.tail, producers: record.producers });
    this.must({ type: 'complete', stream, source: pending.source, target: pending.target, epoch: record.epoch });
  }
}
