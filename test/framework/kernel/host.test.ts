import 'reflect-metadata';
import test from 'ava';
import { inject, injectable } from 'tsyringe';
import { z } from 'zod';
import { CLOCK, type Clock } from '@baton/contracts/internal/clock.js';
import { token } from '@baton/contracts/internal/token.js';
import { createHost, definePlugin, PluginCatalog, WiringError } from '@baton/kernel/internal/index.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';

interface Greeter {
  greet(name: string): string;
}
const GREETER = token<Greeter>('test.Greeter');
const SHOUTER = token<Greeter>('test.Shouter');
const EVENTS = token<string[]>('test.Events');

const clockPlugin = definePlugin({
  id: 'virtual-clock',
  provides: [CLOCK],
  options: z.object({}),
  register: (ctx) => ctx.provide(CLOCK, { useFactory: () => new VirtualClock(0) }),
});

@injectable()
class PoliteGreeter implements Greeter {
  constructor(@inject(CLOCK) private readonly clock: Clock) {}
  greet(name: string) {
    return `hello ${name} at ${this.clock.now()}`;
  }
}

const politePlugin = definePlugin({
  id: 'polite-greeter',
  provides: [GREETER],
  requires: [CLOCK],
  options: z.object({}),
  register: (ctx) => ctx.provide(GREETER, { useClass: PoliteGreeter }),
});

const tersePlugin = definePlugin({
  id: 'terse-greeter',
  provides: [GREETER],
  options: z.object({ word: z.string().default('hi') }),
  register: (ctx) => ctx.provide(GREETER, { useValue: { greet: (n: string) => `${ctx.options.word} ${n}` } }),
});

test('a class provider is built with its @inject parameters resolved from the host', async (t) => {
  const host = createHost([{ plugin: clockPlugin }]).add(politePlugin).build();
  await host.start();
  t.is(host.get(GREETER).greet('ada'), 'hello ada at 0');
  t.is(host.get(GREETER), host.get(GREETER), 'one instance per host');
  await host.stop();
});

test('importing or defining a plugin registers nothing until a host is built', (t) => {
  const host = createHost().build();
  t.false(host.has(GREETER));
  const error = t.throws(() => host.get(GREETER), { instanceOf: WiringError });
  t.regex(error!.message, /baton\.test\.Greeter/);
});

test('an added plugin overrides a default that provides the same token', async (t) => {
  const host = createHost([{ plugin: clockPlugin }, { plugin: politePlugin }])
    .add(tersePlugin, { word: 'yo' })
    .build();
  await host.start();
  t.is(host.get(GREETER).greet('ada'), 'yo ada');
  await host.stop();
});

test('two added providers for one token fail the build naming the token and both plugins', (t) => {
  const builder = createHost([{ plugin: clockPlugin }]).add(politePlugin).add(tersePlugin);
  const error = t.throws(() => builder.build(), { instanceOf: WiringError });
  t.regex(error!.message, /baton\.test\.Greeter/);
  t.regex(error!.message, /polite-greeter/);
  t.regex(error!.message, /terse-greeter/);
});

test('a missing provider fails the build naming the token and the plugin that needs it', (t) => {
  const error = t.throws(() => createHost().add(politePlugin).build(), { instanceOf: WiringError });
  t.regex(error!.message, /polite-greeter requires baton\.Clock/);
});

test('invalid options fail the build with the zod issue and the config path', (t) => {
  const error = t.throws(
    () => createHost().add(tersePlugin, { word: 42 }, 'plugins[1].options').build(),
    { instanceOf: WiringError },
  );
  t.regex(error!.message, /terse-greeter/);
  t.regex(error!.message, /plugins\[1\]\.options\.word/);
});

test('a dependency cycle fails the build naming the plugins in the cycle', (t) => {
  const a = definePlugin({
    id: 'needs-shouter',
    provides: [GREETER],
    requires: [SHOUTER],
    options: z.object({}),
    register: (ctx) => ctx.provide(GREETER, { useValue: { greet: (n: string) => n } }),
  });
  const b = definePlugin({
    id: 'needs-greeter',
    provides: [SHOUTER],
    requires: [GREETER],
    options: z.object({}),
    register: (ctx) => ctx.provide(SHOUTER, { useValue: { greet: (n: string) => n } }),
  });
  const error = t.throws(() => createHost().add(a).add(b).build(), { instanceOf: WiringError });
  t.regex(error!.message, /cycle/);
  t.regex(error!.message, /needs-shouter -> needs-greeter -> needs-shouter/);
});

test('a plugin that provides a token it did not declare is refused', (t) => {
  const sneaky = definePlugin({
    id: 'sneaky',
    provides: [GREETER],
    options: z.object({}),
    register: (ctx) => {
      ctx.provide(GREETER, { useValue: { greet: (n: string) => n } });
      ctx.provide(SHOUTER, { useValue: { greet: (n: string) => n } });
    },
  });
  const error = t.throws(() => createHost().add(sneaky).build(), { instanceOf: WiringError });
  t.regex(error!.message, /sneaky provided baton\.test\.Shouter without declaring it/);
});

test('definePlugin rejects ids that config files could not name', (t) => {
  t.throws(
    () =>
      definePlugin({
        id: 'Bad Id',
        provides: [GREETER],
        options: z.object({}),
        register: () => undefined,
      }),
    { message: /plugin id "Bad Id" is invalid/ },
  );
});

function lifecyclePlugin(id: string, provides: symbol, requires: symbol[], failStop = false) {
  return definePlugin({
    id,
    provides: [provides],
    requires: [EVENTS, ...requires],
    options: z.object({}),
    register: (ctx) =>
      ctx.provide(provides, {
        useFactory: (resolve) => {
          const events = resolve(EVENTS);
          for (const r of requires) resolve(r);
          return {
            start: async () => void events.push(`start ${id}`),
            stop: async () => {
              events.push(`stop ${id}`);
              if (failStop) throw new Error(`${id} refused to stop`);
            },
          };
        },
      }),
  });
}

test('start runs in dependency order and stop in reverse order', async (t) => {
  const A = token<unknown>('test.A');
  const B = token<unknown>('test.B');
  const C = token<unknown>('test.C');
  const events: string[] = [];
  // Added in an order opposite to their dependencies on purpose.
  const host = createHost()
    .value(EVENTS, events)
    .add(lifecyclePlugin('c', C, [B]))
    .add(lifecyclePlugin('b', B, [A]))
    .add(lifecyclePlugin('a', A, []))
    .build();
  await host.start();
  t.deepEqual(events, ['start a', 'start b', 'start c']);
  await host.stop();
  t.deepEqual(events.slice(3), ['stop c', 'stop b', 'stop a']);
});

test('stop is idempotent and runs every hook even when one fails', async (t) => {
  const A = token<unknown>('test.A');
  const B = token<unknown>('test.B');
  const events: string[] = [];
  const host = createHost()
    .value(EVENTS, events)
    .add(lifecyclePlugin('a', A, []))
    .add(lifecyclePlugin('b', B, [A], true))
    .build();
  await host.start();
  const error = await t.throwsAsync(() => host.stop());
  t.regex(error!.message, /b refused to stop/);
  t.deepEqual(events.filter((e) => e.startsWith('stop')), ['stop b', 'stop a']);
  await t.throwsAsync(() => host.stop(), { message: /b refused to stop/ }, 'same outcome again');
  t.is(events.filter((e) => e.startsWith('stop')).length, 2, 'hooks ran once');
});

test('a failing start stops what already started and reports the failure', async (t) => {
  const A = token<unknown>('test.A');
  const B = token<unknown>('test.B');
  const events: string[] = [];
  const broken = definePlugin({
    id: 'broken',
    provides: [B],
    requires: [A],
    options: z.object({}),
    register: (ctx) =>
      ctx.provide(B, {
        useValue: {
          start: async () => {
            throw new Error('port in use');
          },
        },
      }),
  });
  const host = createHost().value(EVENTS, events).add(lifecyclePlugin('a', A, [])).add(broken).build();
  await t.throwsAsync(() => host.start(), { message: 'port in use' });
  t.deepEqual(events, ['start a', 'stop a']);
});

test('each host has its own instances: nothing leaks between hosts', async (t) => {
  const one = createHost([{ plugin: clockPlugin }]).add(politePlugin).build();
  const two = createHost([{ plugin: clockPlugin }]).add(politePlugin).build();
  t.not(one.get(GREETER), two.get(GREETER));
  t.not(one.get(CLOCK), two.get(CLOCK));
});

test('a config choice naming an unknown plugin id fails with its path and the known ids', (t) => {
  const catalog = new PluginCatalog([politePlugin, tersePlugin]);
  const error = t.throws(() => catalog.resolve([{ use: 'terse-greeter' }, { use: 'loud-greeter' }]), {
    instanceOf: WiringError,
  });
  t.regex(error!.message, /plugins\[1\]\.use: unknown plugin id "loud-greeter"/);
  t.regex(error!.message, /known ids: polite-greeter, terse-greeter/);
});

test('config choices resolve to plugin uses whose bad options name the config path', (t) => {
  const catalog = new PluginCatalog([tersePlugin]);
  const uses = catalog.resolve([{ use: 'terse-greeter', options: { word: 7 } }]);
  const builder = createHost();
  for (const use of uses) builder.add(use.plugin, use.options, use.configPath);
  const error = t.throws(() => builder.build(), { instanceOf: WiringError });
  t.regex(error!.message, /plugins\[0\]\.options\.word/);
});

test('a value given to the builder overrides a plugin and is neither started nor stopped by the host', async (t) => {
  const A = token<unknown>('test.A');
  const events: string[] = [];
  const shared = {
    start: () => void events.push('start shared'),
    stop: () => void events.push('stop shared'),
  };
  const host = createHost().value(EVENTS, events).add(lifecyclePlugin('a', A, [])).value(A, shared).build();
  await host.start();
  t.is(host.get(A), shared);
  await host.stop();
  t.deepEqual(events, [], 'the shared instance belongs to its maker');
});
