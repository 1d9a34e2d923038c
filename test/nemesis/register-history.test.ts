import test from 'ava';
import type { KvCommand, KvResult } from '@baton/conformance/internal/kv-state-machine.js';
import { checkLinearizability } from '@baton/conformance/internal/linearizability/index.js';
import { kvRegisterModel } from '@baton/conformance/internal/linearizability/kv-register-model.js';
import { OperationLog } from './operation-log.js';
import { registerHistory } from './register/register-workload.js';

test('a read that misses an acknowledged write makes the recorded history not linearizable', (t) => {
  const log = new OperationLog();
  log
    .invoke<KvCommand, KvResult>('c0', 'put', { op: 'put', key: 'k', value: 'a' })
    .ok({ op: 'put', previous: null });
  log
    .invoke<KvCommand, KvResult>('c1', 'get', { op: 'get', key: 'k' })
    .ok({ op: 'get', value: null });
  t.is(checkLinearizability(kvRegisterModel, registerHistory(log)).outcome, 'illegal');
});

test('a write whose outcome is unknown may be seen or not; a refused one must never be seen', (t) => {
  const unknown = new OperationLog();
  unknown
    .invoke<KvCommand, KvResult>('c0', 'put', { op: 'put', key: 'k', value: 'a' })
    .unknown('no answer in time');
  unknown
    .invoke<KvCommand, KvResult>('c1', 'get', { op: 'get', key: 'k' })
    .ok({ op: 'get', value: 'a' });
  t.is(checkLinearizability(kvRegisterModel, registerHistory(unknown)).outcome, 'ok');

  const refused = new OperationLog();
  refused
    .invoke<KvCommand, KvResult>('c0', 'put', { op: 'put', key: 'k', value: 'a' })
    .fail('connection refused');
  refused
    .invoke<KvCommand, KvResult>('c1', 'get', { op: 'get', key: 'k' })
    .ok({ op: 'get', value: 'a' });
  t.is(checkLinearizability(kvRegisterModel, registerHistory(refused)).outcome, 'illegal');
});
