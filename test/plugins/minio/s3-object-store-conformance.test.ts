import test from 'ava';
import { objectStoreSuite } from '@baton/conformance/internal/object-store-suite.js';
import { openS3Fixture } from './s3-fixture.js';

// s3rver ignores If-None-Match, and the store must find that out by itself at start.
objectStoreSuite({
  test,
  name: 'S3ObjectStore on s3rver',
  supports: { conditionalPut: false },
  factory: async () => {
    const { store, server, cleanup } = await openS3Fixture();
    return {
      store,
      cleanup,
      makeUnavailable: () => server.stop(),
      restore: () => server.restart(),
    };
  },
});
