import test from 'ava';
import { auditStoreSuite } from '../../../framework/conformance/audit-store-suite.js';
import { RedisServer } from '../../../framework/testing/redis-server.js';
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
