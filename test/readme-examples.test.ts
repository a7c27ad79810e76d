/**
 * The README's library example runs as written: its `ts` blocks are run (imports of
 * `rubricate` pointed at the sources) against a loopback judge, and what each prints must
 * equal its `// →` line.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { binaryVerdict, startFakeJudge } from '../src/testing/fake-judge.js';
import { projectRoot } from './helpers.js';

const run = promisify(execFile);
const directory = mkdtempSync(join(tmpdir(), 'rubricate-readme-'));
symlinkSync(join(projectRoot, 'examples'), join(directory, 'examples'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const entries: Record<string, string> = {
  rubricate: 'src/index.ts',
  'rubricate/store': 'src/entries/store.ts',
  'rubricate/server': 'src/entries/server.ts',
  'rubricate/report': 'src/entries/report.ts',
  'rubricate/generation': 'src/entries/generation.ts',
  'rubricate/meta': 'src/entries/meta.ts',
  'rubricate/testing': 'src/entries/testing.ts',
};

const blocks = [...readFileSync(join(projectRoot, 'README.md'), 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]);

describe('README library examples', () => {
  it('has examples that say what they print', () => {
    expect(blocks.length).toBeGreaterThan(0);
    for (const block of blocks) expect(block).toMatch(/\/\/ → /);
  });

  it.each(blocks.map((block, index) => [index, block] as const))('example %i prints what it says', async (index, block) => {
    const judge = await startFakeJudge(() => ({ content: binaryVerdict(true) }));
    try {
      const source = block.replace(/from '(rubricate(?:\/\w+)?)'/g, (whole, name: string) => {
        expect(entries[name], `unknown entry ${name}`).toBeDefined();
        return `from ${JSON.stringify(pathToFileURL(join(projectRoot, entries[name])).href)}`;
      });
      const file = join(directory, `example-${index}.mts`);
      writeFileSync(file, source);
      // Run where the checkout's examples/ are at hand, writing what it writes into the test's folder.
      const { stdout } = await run(process.execPath, ['--import', import.meta.resolve('tsx'), file], {
        cwd: directory,
        env: { ...process.env, OPENAI_BASE_URL: judge.baseUrl, OPENAI_API_KEY: 'test-key', RUBRICATE_JUDGE: '' },
      });
      const expected = [...block.matchAll(/^\/\/ → (.*)$/gm)].map((match) => match[1]);
      expect(stdout.trim().split('\n')).toEqual(expected);
      expect(judge.requests.length).toBeGreaterThan(0);
    } finally {
      await judge.close();
    }
  });
});
