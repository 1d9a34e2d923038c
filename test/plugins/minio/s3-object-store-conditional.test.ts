import test from 'ava';
import { objectStoreSuite } from '@baton/conformance/internal/object-store-suite.js';
import { openS3Fixture } from './s3-fixture.js';

// The same suite on an s3rver that honours If-None-Match as AWS S3 and MinIO do: the store must
// detect it at start and then create atomically, also under contention.
objectStoreSuite({
  test,
  name: 'S3ObjectStore on s3rver with create-only puts',
  supports: { conditionalPut: true },
  factory: async () => {
    const { store, server, cleanup } = await openS3Fixture(
      {},
      { server: { conditionalPut: true } },
    );
    return {
      store,
      cleanup,
      makeUnavailable: () => server.stop(),
      restore: () => server.restart(),
    };
  },
});
