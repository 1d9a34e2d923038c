// One voter of setup (b), run as its own process by http-processes.ts (forked, with an IPC
// channel): plugins/raft with file storage in a directory, peers reached over HTTP on loopback.
// Arguments: <self> <port> <peers as JSON {id: baseUrl}> <data dir>.
// IPC in:  {type:'status'} -> {type:'status', isLeader}
//          {type:'load', concurrency, seconds} -> {type:'result', summary}   (proposes here)
//          {type:'stop'} -> stops and exits.
import { createServer } from 'node:http';
import Koa from 'koa';
import { createSilentLogger } from '../../framework/kernel/pino-logger.js';
import { SystemClock } from '../../framework/kernel/system-clock.js';
import { SystemRng } from '../../framework/kernel/system-rng.js';
import { kvStateMachine, type KvCommand, type KvResult, type KvState } from '../../framework/testing/fakes/kv-state-machine.js';
import { RaftConsensus } from '../../plugins/raft/driver/raft-consensus.js';
import { DirectoryFiles } from '../../framework/kernel/byte-files.js';
import { FileRaftStorage } from '../../plugins/raft/storage/file-storage.js';
import { HttpPeerTransport } from '../../plugins/raft/transport-http.js';
import { runLoad } from './load.js';

type Command = { type: 'status' } | { type: 'load'; concurrency: number; seconds: number } | { type: 'stop' };

const [self, portText, peersJson, dataDir] = process.argv.slice(2);
if (!self || !portText || !peersJson || !dataDir || !process.send) {
  console.error('usage (forked with IPC): member.js <self> <port> <peers JSON> <data dir>');
  process.exit(2);
}
const reply = (message: unknown) => process.send!(message);
const peers = JSON.parse(peersJson) as Record<string, string>;
const clock = new SystemClock();
const logger = createSilentLogger();
const transport = new HttpPeerTransport({ self, peers, cluster: 'bench', clock, logger });
const files = new DirectoryFiles(dataDir);
const raft = new RaftConsensus<KvState, KvCommand, KvResult>({
  self,
  voters: [self, ...Object.keys(peers)],
  cluster: 'bench',
  machine: kvStateMachine,
  storage: new FileRaftStorage(files),
  transport,
  clock,
  rng: new SystemRng(),
  logger,
  maxQueue: 100_000,
  snapshotInterval: 50_000,
});

const app = new Koa();
const router = transport.router();
app.use(router.routes()).use(router.allowedMethods());
const server = createServer(app.callback());
server.keepAliveTimeout = 60_000;
await new Promise<void>((resolve, reject) => {
  server.once('error', reject);
  server.listen(Number(portText), '127.0.0.1', resolve);
});
await raft.start();
reply({ type: 'ready' });

process.on('message', (command: Command) => {
  void (async () => {
    if (command.type === 'status') {
      reply({ type: 'status', isLeader: raft.leadership().isLeader });
    } else if (command.type === 'load') {
      const summary = await runLoad(command.concurrency, command.seconds, (w, n) =>
        raft.propose({ op: 'put', key: `k${w}`, value: String(n) }),
      );
      reply({ type: 'result', summary });
    } else if (command.type === 'stop') {
      await raft.stop();
      transport.stop();
      await files.close();
      server.closeAllConnections();
      server.close();
      process.exit(0);
    }
  })();
});
// The parent died without saying stop: do not linger.
process.on('disconnect', () => process.exit(1));
