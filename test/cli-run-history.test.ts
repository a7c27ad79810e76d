/**
 * The run history from the command line: every `grade` adds its start and end to the run index
 * (`--run-index`, here a file of the test's own), and `rubricate view` with no folder serves the
 * runs it lists, wherever their results are.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect } from 'vitest';
import { runCli } from '../src/cli/main.js';
import { readRunIndex } from '../src/results/run-index.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { projectRoot, runCliInProcess } from './helpers.js';

const items = resolve(projectRoot, 'examples/items.jsonl');

describe('run history', { timeout: 60_000 }, () => {
  test('grade records how each run ended: finished with its counts, failed with its reason, interrupted', async ({ tempDir }) => {
    const index = join(tempDir, 'history', 'runs.jsonl');
    const finished = await runCliInProcess(['grade', '--input', items, '--judge', 'scripted', '--no-cache', '--quiet', '--run-index', index, '--out', join(tempDir, 'a.jsonl')]);
    expect(finished.code).toBe(0);
    const failed = await runCliInProcess(['grade', '--format', 'healthbench', '--input', resolve(projectRoot, 'examples/healthbench/examples.jsonl'), '--judge', 'scripted', '--no-cache', '--run-index', index, '--out', join(tempDir, 'b.jsonl')]);
    expect(failed.code).toBe(2);
    const stopped = new AbortController();
    stopped.abort();
    await runCli(['grade', '--input', items, '--judge', 'scripted', '--no-cache', '--quiet', '--run-index', index, '--out', join(tempDir, 'c.jsonl')], { stdout: () => undefined, stderr: () => undefined, signal: stopped.signal });
    const runs = await readRunIndex(index);
    const byFile = Object.fromEntries(runs.map((run) => [run.results.slice(-7), run]));
    const lines = readFileSync(join(tempDir, 'a.jsonl'), 'utf8').trim().split('\n').length;
    expect(byFile['a.jsonl']).toMatchObject({ status: 'finished', command: 'grade', judges: ['scripted:mixed'], made_up: true, items: { n: lines, ok: lines, error: 0, invalid: 0 }, input: items });
    expect(byFile['b.jsonl']).toMatchObject({ status: 'failed', error: expect.stringMatching(/^CONFIG_INVALID: healthbench needs responses/) });
    expect(byFile['c.jsonl']).toMatchObject({ status: 'interrupted' });
    // Two lines per run: its start and its end.
    expect(readFileSync(index, 'utf8').trim().split('\n')).toHaveLength(6);
    // A dry run writes no results, so no history.
    await runCliInProcess(['grade', '--input', items, '--judge', 'scripted', '--dry-run', '--run-index', index, '--out', join(tempDir, 'd.jsonl')]);
    expect(await readRunIndex(index)).toHaveLength(3);
  });

  test('compare, merge and eval record their runs too: finished with their counts, a refused merge as failed', async ({ tempDir }) => {
    const index = join(tempDir, 'runs.jsonl');
    const compared = await runCliInProcess(['compare', '--input', resolve(projectRoot, 'examples/pairs/pairs.jsonl'), '--judge', 'scripted', '--no-cache', '--quiet', '--run-index', index, '--out', join(tempDir, 'pairs.jsonl')]);
    expect(compared.code, compared.stderr).toBe(0);
    const pairs = readFileSync(join(tempDir, 'pairs.jsonl'), 'utf8').trim().split('\n').length;
    const shards = ['0/2', '1/2'].map((shard, at) => join(tempDir, `shard-${at}.jsonl`));
    for (const [at, shard] of ['0/2', '1/2'].entries()) {
      // The shards themselves go to another history: only the merge is looked at here.
      const graded = await runCliInProcess(['grade', '--input', items, '--judge', 'scripted', '--no-cache', '--quiet', '--shard', shard, '--run-index', 'off', '--out', shards[at]]);
      expect(graded.code, graded.stderr).toBe(0);
    }
    const merged = await runCliInProcess(['merge', ...shards, '--run-index', index, '--out', join(tempDir, 'merged.jsonl')]);
    expect(merged.code, merged.stderr).toBe(0);
    const refused = await runCliInProcess(['merge', shards[0], '--run-index', index, '--out', join(tempDir, 'half.jsonl')]);
    expect(refused.code).not.toBe(0);
    const evaluated = await runCliInProcess(['eval', '--input', items, '--model', 'scripted', '--judge', 'scripted', '--no-cache', '--quiet', '--run-index', index, '--out', join(tempDir, 'eval.jsonl')]);
    expect(evaluated.code, evaluated.stderr).toBe(0);

    const byFile = Object.fromEntries((await readRunIndex(index)).map((run) => [run.results.slice(tempDir.length + 1), run]));
    expect(byFile['pairs.jsonl']).toMatchObject({ status: 'finished', command: 'compare', judges: ['scripted:mixed'], made_up: true, items: { n: pairs }, input: resolve(projectRoot, 'examples/pairs/pairs.jsonl') });
    const mergedLines = readFileSync(join(tempDir, 'merged.jsonl'), 'utf8').trim().split('\n').length;
    expect(byFile['merged.jsonl']).toMatchObject({ status: 'finished', command: 'merge', judges: ['scripted:mixed'], made_up: true, items: { n: mergedLines, ok: mergedLines } });
    expect(byFile['half.jsonl']).toMatchObject({ status: 'failed', command: 'merge', error: expect.stringMatching(/^MERGE_REFUSED: the shards do not cover the input/) });
    expect(byFile['eval.jsonl']).toMatchObject({ status: 'finished', command: 'eval', judges: ['scripted:mixed'], models: [expect.stringMatching(/^scripted/)], made_up: true });
  });

  test('view with no folder serves the runs of the history', async ({ tempDir }) => {
    const index = join(tempDir, 'runs.jsonl');
    const out = join(tempDir, 'elsewhere', 'a.jsonl');
    expect((await runCliInProcess(['grade', '--input', items, '--judge', 'scripted', '--no-cache', '--quiet', '--run-index', index, '--out', out])).code).toBe(0);
    const stop = new AbortController();
    let announced: (line: string) => void = () => undefined;
    const address = new Promise<string>((resolve) => (announced = resolve));
    const viewing = runCli(['view', '--port', '0', '--run-index', index], { stdout: () => undefined, stderr: (line) => announced(line), signal: stop.signal });
    const line = await address;
    expect(line).toContain(`viewing the run history ${index} at http://127.0.0.1:`);
    const url = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(line)![1];
    try {
      const page = await (await fetch(url)).text();
      expect(page).toContain('rubricate-payload');
      const state = await (await fetch(`${url}api/run-state?file=${encodeURIComponent(out)}`)).json();
      expect(state).toMatchObject({ file: out, status: 'finished', live: false, lines: readFileSync(out, 'utf8').trim().split('\n').length });
    } finally {
      stop.abort();
    }
    expect(await viewing).toBe(0);
  });
});
