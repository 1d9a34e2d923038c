import test from 'ava';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseTranscript, renderTranscript, ScriptRunner } from './support/script.js';

// Transcripts live next to the sources (not in dist), so REWRITE=1 updates the committed files.
const dir = fileURLToPath(new URL('../../../../test/plugins/raft/testdata/', import.meta.url));
const rewrite = process.env.REWRITE === '1';

for (const file of readdirSync(dir).filter((f) => f.endsWith('.txt')).sort()) {
  test(`transcript ${file}`, (t) => {
    const path = dir + file;
    const blocks = parseTranscript(readFileSync(path, 'utf8'));
    t.true(blocks.length > 0, `${file} has no commands`);
    const runner = new ScriptRunner();
    const produced = blocks.map((b) => ({ ...b, expected: runner.run(b.command) }));
    if (rewrite) {
      writeFileSync(path, renderTranscript(produced));
      t.log(`rewrote ${file}: review the diff before committing`);
      return;
    }
    for (let i = 0; i < blocks.length; i++) {
      t.is(
        produced[i].expected,
        blocks[i].expected,
        `${file}: command ${i + 1} (${blocks[i].command}) differs; run with REWRITE=1 to regenerate, then review the diff`,
      );
    }
  });
}
