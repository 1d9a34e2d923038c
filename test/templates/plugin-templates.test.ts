import test from 'ava';
import { generateProject, runTool } from './generated-project.js';

// Each plugin template, generated into a temp dir, built with tsc and tested with ava, exactly
// as its README tells an integrator to. The stubs must compile and fail their conformance suite
// because they are not implemented (not for any other reason); the example must pass.
// Serial: several builds at once starve a small machine.

for (const contract of ['object-store', 'audit-store', 'identity-supplier']) {
  test.serial(
    `the ${contract} plugin template compiles, and its suite fails only because the stub is not implemented`,
    async (t) => {
      const project = await generateProject(t, ['new', 'plugin', 'acme', '--contract', contract]);
      const build = await runTool(project.dir, 'tsc');
      t.is(build.code, 0, `tsc failed:\n${build.output}`);
      const tests = await runTool(project.dir, 'ava');
      t.is(tests.code, 1, `ava should fail until implemented:\n${tests.output}`);
      t.regex(tests.output, /is not implemented yet: implement it in src\/acme-[a-z-]+\.ts/);
      t.regex(tests.output, /\d+ tests? failed/);
      // The plugin's own wiring test does not depend on the stub and passes already.
      t.regex(tests.output, /✔ acme: the plugin refuses an unknown option, naming it/);
    },
  );
}

test.serial(
  'the implemented identity-supplier example compiles and passes its conformance suite',
  async (t) => {
    const project = await generateProject(t, [
      'new',
      'plugin',
      'acme-identity',
      '--contract',
      'identity-supplier',
      '--example',
    ]);
    const build = await runTool(project.dir, 'tsc');
    t.is(build.code, 0, `tsc failed:\n${build.output}`);
    const tests = await runTool(project.dir, 'ava');
    t.is(tests.code, 0, `ava failed:\n${tests.output}`);
    t.regex(tests.output, /✔ acme-identity: operation\(\) draws from the injected Rng/);
    t.regex(tests.output, /(\d+) tests passed/);
    t.notRegex(tests.output, /failed/);
  },
);
