import test from 'ava';
import { METADATA_CONSENSUS } from '@baton/contracts/internal/metadata-consensus.js';
import { OBJECT_STORE } from '@baton/contracts/internal/object-store.js';
import { streamNodeHostBuilder, streamNodeHostConfig } from '@baton/host-stream-node/internal/index.js';
import { s3ObjectStoreOptions } from '@baton/plugin-minio/internal/options.js';
import { S3ObjectStore } from '@baton/plugin-minio/internal/s3-object-store.js';
import { RaftConsensus } from '@baton/plugin-raft/internal/driver/raft-consensus.js';
import { loadExampleInTempDir } from '../example-config.js';

// The example users copy: it must keep loading as the schemas evolve.
test('examples/minio.json loads, takes its credentials from the environment, and composes the S3 store on the default Raft', async (t) => {
  const config = await loadExampleInTempDir(t, streamNodeHostConfig, 'stream-node', 'minio.json', {
    BATON__objectStore__options__accessKey: 'key-from-env',
    BATON__objectStore__options__secretKey: 'secret-from-env',
  });
  t.is(config.objectStore?.use, 's3-object-store');
  t.is(config.consensus, undefined, 'no consensus chosen: the default one-voter Raft');
  t.like(s3ObjectStoreOptions.parse(config.objectStore?.options), {
    endpoint: 'http://minio.internal:9000',
    region: 'us-east-1',
    bucket: 'baton-streams',
    pathStyle: true,
    accessKey: 'key-from-env',
    secretKey: 'secret-from-env',
  });

  const host = streamNodeHostBuilder(config).build();
  t.true(host.get(OBJECT_STORE) instanceof S3ObjectStore);
  t.true(host.get(METADATA_CONSENSUS) instanceof RaftConsensus);
});
