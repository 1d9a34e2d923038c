import test from 'ava';
import { AUDIT_STORE } from '@baton/contracts/internal/audit-store.js';
import { METADATA_CONSENSUS } from '@baton/contracts/internal/metadata-consensus.js';
import {
  authorityNodeHostBuilder,
  authorityNodeHostConfig,
} from '@baton/host-authority-node/internal/index.js';
import { RaftConsensus } from '@baton/plugin-raft/internal/driver/raft-consensus.js';
import { redisAuditStoreOptions } from '@baton/plugin-redis/internal/options.js';
import { RedisAuditStore } from '@baton/plugin-redis/internal/redis-audit-store.js';
import { loadExampleInTempDir } from '../example-config.js';

// The example users copy: it must keep loading as the schemas evolve.
test('examples/redis.json loads, takes its Redis password from the environment, and composes the Redis audit store', async (t) => {
  const config = await loadExampleInTempDir(
    t,
    authorityNodeHostConfig,
    'authority-node',
    'redis.json',
    {
      BATON__auditStore__options__password: 'password-from-env',
      BATON__node__tokens__0__token: 'admin-token-from-env',
    },
  );
  t.is(config.auditStore?.use, 'redis-audit-store');
  t.is(config.consensus, undefined, 'no consensus chosen: the default one-voter Raft');
  t.like(redisAuditStoreOptions.parse(config.auditStore?.options), {
    url: 'redis://redis.internal:6379/0',
    username: 'baton',
    password: 'password-from-env',
    keyPrefix: 'baton:east-1:',
    connectTimeoutMs: 5000,
    commandTimeoutMs: 2000,
  });
  t.like(config.node.tokens, [{ token: 'admin-token-from-env', principal: 'operator' }]);

  const host = authorityNodeHostBuilder(config).build();
  t.true(host.get(AUDIT_STORE) instanceof RedisAuditStore);
  t.true(host.get(METADATA_CONSENSUS) instanceof RaftConsensus);
});
