import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { AUTHORITY_NODE } from '@baton/authority-transfer/internal/plugins.js';
import { METADATA_CONSENSUS } from '@baton/contracts/internal/metadata-consensus.js';
import { authorityNodeHostBuilder, defaultAuthorityNodeConfig, startAuthorityNodeFromFile } from '@baton/host-authority-node/internal/index.js';

test('the default config builds a host in mode ha with a consensus and a node', (t) => {
  const host = authorityNodeHostBuilder(defaultAuthorityNodeConfig).build();
  t.true(host.has(AUTHORITY_NODE));
  t.true(host.has(METADATA_CONSENSUS));
});

test('mode dc composes no ownership consensus', (t) => {
  const host = authorityNodeHostBuilder({ ...defaultAuthorityNodeConfig, node: { ...defaultAuthorityNodeConfig.node, mode: 'dc' } }).build();
  t.true(host.has(AUTHORITY_NODE));
  t.false(host.has(METADATA_CONSENSUS));
});

test('invalid node options fail the build naming the config path', (t) => {
  const error = t.throws(() =>
    authorityNodeHostBuilder({ ...defaultAuthorityNodeConfig, node: { ...defaultAuthorityNodeConfig.node, transfers: { budgetMs: -1 } } }).build(),
  );
  t.regex(error!.message, /node\.transfers\.budgetMs/);
});

test('a node that is not in its roster is refused with a message saying so', (t) => {
  const error = t.throws(() =>
    authorityNodeHostBuilder({ ...defaultAuthorityNodeConfig, node: { ...defaultAuthorityNodeConfig.node, self: 'ghost' } }).build(),
  );
  t.regex(error!.message, /ghost is not in the roster/);
});

test('an unknown audit store id lists the ids that would work', (t) => {
  const error = t.throws(() => authorityNodeHostBuilder({ ...defaultAuthorityNodeConfig, auditStore: { use: 'paper' } }));
  t.regex(error!.message, /auditStore\.use: unknown plugin id "paper".*memory-audit-store/);
});

test('a node starts from a config file with environment overrides, serves, and stops', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'authority-node-'));
  try {
    const file = join(dir, 'node.json');
    await writeFile(
      file,
      JSON.stringify({
        ...defaultAuthorityNodeConfig,
        // Its own dataDir: the default ("data" in the working directory) would land in the checkout.
        dataDir: join(dir, 'data'),
        node: { ...defaultAuthorityNodeConfig.node, public: { port: 0 }, control: { port: 0 } },
        auditStore: { use: 'fs-audit-store', options: { dir: join(dir, 'audit') } },
        log: { level: 'silent' },
      }),
    );
    const { host, node } = await startAuthorityNodeFromFile({
      file,
      env: { BATON__node__tokens: JSON.stringify([{ token: 'tok', principal: 'ops', scopes: ['admin:read'] }]) },
    });
    try {
      const res = await fetch(`${node.controlAddress.url}/availability/v1/members`, { headers: { authorization: 'Bearer tok' } });
      t.is(res.status, 200);
      t.like(await res.json(), { members: [{ member: 'east-1', datacenter: 'east', state: 'Alive' }] });
      t.true(existsSync(join(dir, 'data', 'raft')), 'the Raft log is under the dataDir the file gives');
      t.false(existsSync(join(process.cwd(), 'data')), 'nothing is written where the tests run');
    } finally {
      await host.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
