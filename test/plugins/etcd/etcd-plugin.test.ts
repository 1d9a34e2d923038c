import test from 'ava';
import { CLOCK } from '@baton/contracts/internal/clock.js';
import { BatonError } from '@baton/contracts/internal/errors.js';
import { LOGGER } from '@baton/contracts/internal/logger.js';
import {
  METADATA_CONSENSUS,
  STATE_MACHINE,
} from '@baton/contracts/internal/metadata-consensus.js';
import { RNG } from '@baton/contracts/internal/rng.js';
import { createHost } from '@baton/kernel/internal/host.js';
import { createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { WiringError } from '@baton/kernel/internal/wiring-error.js';
import { EtcdCluster } from '@baton/conformance/internal/servers/etcd-server.js';
import { kvStateMachine } from '@baton/conformance/internal/kv-state-machine.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { refusingPort } from '../../support/refusing-port.js';
import { etcdConsensusPlugin } from '@baton/plugin-etcd/internal/plugin.js';
import { freshPrefix } from './etcd-fixture.js';

const host = (options: unknown) =>
  createHost()
    .value(LOGGER, createSilentLogger())
    .value(CLOCK, new SystemClock())
    .value(RNG, new SeededRng(7))
    .value(STATE_MACHINE, kvStateMachine)
    .add(etcdConsensusPlugin, options, 'consensus.options');

test('the plugin provides MetadataConsensus; the host starts it against etcd and stops it', async (t) => {
  const etcd = await EtcdCluster.start();
  t.teardown(() => etcd.close());
  const built = host({
    endpoints: etcd.endpoints,
    prefix: freshPrefix('plugin'),
    memberId: 'solo',
  }).build();
  await built.start();
  t.teardown(() => built.stop());
  const consensus = built.get(METADATA_CONSENSUS);
  const receipt = await consensus.propose({ op: 'put', key: 'k', value: 'v' });
  t.deepEqual(receipt.result, { op: 'put', previous: null });
  t.deepEqual(consensus.membership().voters, ['solo']);
  await built.stop();
  const error = await consensus
    .propose({ op: 'put', key: 'k', value: 'w' })
    .catch((e: unknown) => e);
  t.like(error, { code: 'not_appended.stopped' }, 'a stopped member refuses, saying so');
});

test('a host without a state machine fails to build, naming the token', (t) => {
  const error = t.throws(
    () =>
      createHost()
        .value(LOGGER, createSilentLogger())
        .value(CLOCK, new SystemClock())
        .value(RNG, new SeededRng(1))
        .add(etcdConsensusPlugin, { endpoints: ['http://127.0.0.1:2379'], memberId: 'a' })
        .build(),
    { instanceOf: WiringError },
  );
  t.regex(error!.message, /StateMachine/);
});

test('invalid options fail the build with the option path and what is wrong', (t) => {
  const noEndpoints = t.throws(() => host({ endpoints: [], memberId: 'a' }).build(), {
    instanceOf: WiringError,
  });
  t.regex(noEndpoints!.message, /consensus\.options\.endpoints: list at least one etcd endpoint/);
  const badPrefix = t.throws(
    () => host({ endpoints: ['http://h:1'], memberId: 'a', prefix: 'x' }).build(),
    {
      instanceOf: WiringError,
    },
  );
  t.regex(badPrefix!.message, /prefix/);
  const noMember = t.throws(() => host({ endpoints: ['http://h:1'] }).build(), {
    instanceOf: WiringError,
  });
  t.regex(noMember!.message, /memberId/);
  const path = t.throws(() => host({ endpoints: ['http://h:1/v3'], memberId: 'a' }).build(), {
    instanceOf: WiringError,
  });
  t.regex(path!.message, /no path/);
});

test('start fails with advice when etcd cannot be reached', async (t) => {
  const port = await refusingPort(t);
  const built = host({
    endpoints: [`http://127.0.0.1:${port}`],
    memberId: 'a',
    proposeTimeoutMs: 1_500,
    requestTimeoutMs: 500,
  }).build();
  // Should it start after all, it must not keep the test process alive.
  t.teardown(() => built.stop().catch(() => undefined));
  const error = await t.throwsAsync(built.start());
  const cause = error instanceof AggregateError ? error.errors[0] : error;
  t.true(cause instanceof BatonError, String(cause));
  t.regex(
    String((cause as Error).message),
    new RegExp(`127\\.0\\.0\\.1:${port}.*Check that etcd runs`),
  );
});
