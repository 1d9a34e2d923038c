import { NodeProcess, type ExitStatus, type StartOutcome } from './node-process.js';

/** One node of the local cluster as `baton node list` shows it. */
export interface NodeState {
  id: string;
  /** running; stopped (by `baton node stop` or the cluster's stop); exited on its own. */
  state: 'running' | 'stopped' | 'exited';
  pid?: number;
  /** How its last process ended, and why, when it is not running. */
  code?: ExitStatus;
  cause?: string;
}

/** A node that ended without being asked to: what `baton up` reports. */
export interface NodeExit {
  id: string;
  code: ExitStatus;
  cause: string;
}

interface NodeSpec {
  id: string;
  file: string;
  logFile: string;
  /** The cluster CA the node trusts for its peers' HTTPS. */
  caFile?: string;
}

/**
 * The node processes of one local cluster, each started, stopped and started again on its own:
 * a node that dies is reported and left down (no automatic restart), so its failure and its
 * recovery (`baton node start`) can be watched; the other nodes keep serving.
 */
export class NodeSupervisor {
  private readonly processes = new Map<string, NodeProcess>();
  private readonly last = new Map<string, NodeState>();
  /** Nodes being stopped on request: their exit is not a failure. */
  private readonly stopping = new Set<string>();

  constructor(
    private readonly entryPoint: string,
    private readonly specs: readonly NodeSpec[],
    private readonly onExit: (exit: NodeExit) => void,
  ) {}

  get ids(): string[] {
    return this.specs.map((spec) => spec.id);
  }

  has(id: string): boolean {
    return this.specs.some((spec) => spec.id === id);
  }

  /** Spawns the node; resolves once it listens, or with why it ended first. */
  start(id: string): Promise<StartOutcome> {
    const spec = this.spec(id);
    const running = this.processes.get(id);
    if (running?.running) return running.started;
    const node = new NodeProcess(spec.id, this.entryPoint, spec.file, spec.logFile, spec.caFile);
    this.processes.set(id, node);
    this.last.set(id, { id, state: 'running', ...(node.pid ? { pid: node.pid } : {}) });
    void node.exited.then((code) => {
      const requested = this.stopping.delete(id);
      const cause = node.cause(code);
      this.last.set(id, {
        id,
        state: requested ? 'stopped' : 'exited',
        code,
        ...(requested ? {} : { cause }),
      });
      if (!requested) this.onExit({ id, code, cause });
    });
    return node.started;
  }

  /** Stops the node (SIGTERM, then SIGKILL after a grace period); its exit is not reported as a failure. */
  async stop(id: string): Promise<ExitStatus | undefined> {
    const node = this.processes.get(this.spec(id).id);
    if (!node?.running) return undefined;
    this.stopping.add(id);
    return node.stop();
  }

  /** Stops every running node, last started first; the nodes that did not exit with 0. */
  async stopAll(): Promise<{ id: string; code: ExitStatus }[]> {
    const failures: { id: string; code: ExitStatus }[] = [];
    for (const id of [...this.ids].reverse()) {
      const code = await this.stop(id);
      if (code !== undefined && code !== 0) failures.push({ id, code });
    }
    return failures;
  }

  states(): NodeState[] {
    return this.ids.map((id) => this.last.get(id) ?? { id, state: 'stopped' });
  }

  private spec(id: string): NodeSpec {
    const spec = this.specs.find((s) => s.id === id);
    if (!spec) throw new Error(`no node ${id} in this cluster`);
    return spec;
  }
}
