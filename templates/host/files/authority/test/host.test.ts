import test, { type ExecutionContext } from 'ava';
import { AUTHORITY_NODE } from '@baton/authority-transfer';
import { loadConfig, WiringError } from '@baton/kernel';
import { hostConfig, type HostConfig } from '../src/config.js';
import { hostBuilder } from '../src/host.js';
{{testHelperImport}}
const ADMIN_TOKEN = 'test-admin-token';
const CONFIG_FILE = new URL('../../config/host.json', import.meta.url).pathname;

/** The host's config for one test: free ports, a known token, isolated storage, quiet logs. */
async function testConfig(t: ExecutionContext, self = 'east-1'): Promise<HostConfig> {
  return hostConfig.parse({
    node: {
      self,
      mode: 'ha',
      roster: { east: { members: { 'east-1': { public: 'http://127.0.0.1:9' } } } },
      public: { port: 0 },
      control: { port: 0 },
      tokens: [{ token: ADMIN_TOKEN, principal: 'admin', scopes: ['admin:write', 'admin:read'] }],
    },
    consensus: {{consensusTestOptions}},
    auditStore: {{auditStoreTestOptions}},
    identity: {{identityTestOptions}},
    log: { level: 'silent' },
  });
}

test('the host starts on free ports, answers its control API, and stops', async (t) => {
  const host = hostBuilder(await testConfig(t)).build();
  await host.start();
  t.teardown(() => host.stop());
  const control = host.get(AUTHORITY_NODE).controlAddress.url;

  const members = await fetch(`${control}/availability/v1/members`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  t.is(members.status, 200);
  const body = (await members.json()) as { members: unknown[] };
  t.true(Array.isArray(body.members), 'the members list');

  const anonymous = await fetch(`${control}/availability/v1/members`);
  t.is(anonymous.status, 401, 'the control API refuses a request without a token');
});

test('config/host.json is a valid configuration of this host', async (t) => {
  const config = await loadConfig(hostConfig, { file: CONFIG_FILE, env: {} });
  t.notThrows(() => hostBuilder(config).build());
});

test('a config mistake fails the build, naming its path', async (t) => {
  const config = await testConfig(t, 'nowhere-1');
  const error = t.throws(() => hostBuilder(config).build(), { instanceOf: WiringError });
  t.regex(error!.message, /node\.self/);
  t.regex(error!.message, /nowhere-1 is not in the roster/);
});
