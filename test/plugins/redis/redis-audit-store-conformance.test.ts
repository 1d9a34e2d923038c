import test from 'ava';
import { auditStoreSuite } from '@baton/conformance/internal/audit-store-suite.js';
import { RedisServer } from '@baton/conformance/internal/servers/redis-server.js';
import { eventually, openStore } from './redis-fixture.js';

// Each fixture gets its own redis-server, because the outage test stops it; and its own random
// prefix, as deployments sharing a Redis would.
auditStoreSuite({
  test,
  name: 'RedisAuditStore',
  factory: async () => {
    const server = await RedisServer.start();
    const { store, cleanup } = await openStore(server);
    return {
      store,
      cleanup: async () => {
        await cleanup();
        await server.close();
      },
      makeUnavailable: () => server.stop(),
      restore: async () => {
        await server.restart();
        // The store reconnects by itself; restored means it answers again.
        await eventually(() => store.latest('reconnected?'));
      },
    };
  },
});
