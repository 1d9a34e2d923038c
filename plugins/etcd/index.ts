// The etcd plugin: MetadataConsensus on an etcd cluster.
export { etcdConsensusPlugin } from './plugin.js';
export { EtcdConsensus, type EtcdConsensusDeps } from './etcd-consensus.js';
export {
  etcdConsensusOptions,
  type EtcdConsensusOptions,
  type EtcdConsensusInput,
} from './options.js';
export { LogHoleError } from './log-follower.js';
export type { EndpointStats } from './endpoint-health.js';
