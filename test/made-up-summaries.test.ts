/**
 * Made-up verdicts on the terminal and in metrics files: every command that prints a run's
 * figures says first that its verdicts are made up, naming who made them up (the scripted judge
 * by name, a fake-judge endpoint by its explanations), and its metrics or summary file carries
 * `scripted: true`. A model's run says nothing of the kind.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { binaryVerdict } from '../src/testing/fake-judge.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { scriptedLabel } from '../src/util/made-up.js';
import { projectRoot, runCliInProcess } from './helpers.js';

const items = join(projectRoot, 'examples/items.jsonl');
const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
/** The summary's first line: the first one after the per-record input errors printed while the run went. */
const firstLine = (stderr: string) => stderr.split('\n').find((line) => !line.startsWith('invalid input: '));
const notice = /^made up: these verdicts come from a scripted judge, not a model \((.+)\)$/;

describe('made-up verdicts on the terminal and in metrics files', { concurrent: true }, () => {
  test('grade, rejudge, score and meta with the scripted judge: the first line says so, the files carry scripted: true', async ({ tempDir }) => {
    const results = join(tempDir, 'results.jsonl');
    const metrics = join(tempDir, 'metrics.json');
    const graded = await runCliInProcess(['grade', '--input', items, '--judge', 'scripted:mixed', '--no-cache', '--out', results, '--metrics', metrics]);
    expect(graded.code, graded.stderr).toBe(0);
    expect(firstLine(graded.stderr)).toMatch(notice);
    expect(firstLine(graded.stderr)).toContain('(scripted:mixed)');
    expect(graded.stderr).toContain('no cost (no model was asked)');
    expect(readJson(metrics)).toMatchObject({ scripted: true, scripted_by: 'scripted:mixed' });

    const rejudged = await runCliInProcess(['rejudge', '--input', results, '--judge', 'scripted:met', '--no-cache', '--out', join(tempDir, 'rejudged.jsonl'), '--metrics', join(tempDir, 'rejudged.json')]);
    // The example's second item keeps a rubric a results line cannot rebuild: exit 3, reported above the summary.
    expect(rejudged.code, rejudged.stderr).toBe(3);
    expect(firstLine(rejudged.stderr)).toBe('made up: these verdicts come from a scripted judge, not a model (scripted:met)');
    expect(readJson(join(tempDir, 'rejudged.json'))).toMatchObject({ scripted: true, scripted_by: 'scripted:met' });

    const scored = await runCliInProcess(['score', '--input', results, '--out', join(tempDir, 'scored.json')]);
    expect(firstLine(scored.stderr)).toMatch(notice);
    expect(readJson(join(tempDir, 'scored.json'))).toMatchObject({ scripted: true });

    const meta = await runCliInProcess(['meta', '--format', 'results', '--input', results, '--labels', join(projectRoot, 'examples/labels/items-labels.jsonl'), '--out', join(tempDir, 'meta.json'), '--bootstrap-resamples', '0']);
    expect(firstLine(meta.stderr)).toMatch(notice);
    expect(readJson(join(tempDir, 'meta.json'))).toMatchObject({ scripted: true, scripted_by: 'scripted:mixed' });
  });

  test('compare with the scripted judge: the first line and the summary file', async ({ tempDir }) => {
    const out = join(tempDir, 'compared.jsonl');
    const compared = await runCliInProcess(['compare', '--input', join(projectRoot, 'examples/pairs/pairs.jsonl'), '--judge', 'scripted:mixed', '--no-cache', '--out', out]);
    expect(compared.code, compared.stderr).toBe(0);
    expect(firstLine(compared.stderr)).toMatch(notice);
    expect(readJson(`${out}.summary.json`)).toMatchObject({ scripted: true, scripted_by: 'scripted:mixed' });
  });

  test('a fake-judge endpoint is found by its explanations; a model run says nothing of the kind', async ({ tempDir, startJudge }) => {
    const scripted = await startJudge(() => ({ content: binaryVerdict(true, scriptedLabel) }));
    const faked = await runCliInProcess(['grade', '--input', items, '--judge', 'openai:gpt-4.1-mini', '--judge-base-url', scripted.baseUrl, '--no-cache', '--out', join(tempDir, 'faked.jsonl'), '--metrics', join(tempDir, 'faked.json')]);
    expect(firstLine(faked.stderr)).toBe('made up: these verdicts come from a scripted judge, not a model (rubricate fake-judge (scripted))');
    expect(faked.stderr).not.toMatch(/\$\d/);
    expect(readJson(join(tempDir, 'faked.json'))).toMatchObject({ scripted: true, usage: { cost_usd: 0 } });

    const model = await startJudge(() => ({ content: binaryVerdict(true) }));
    const real = await runCliInProcess(['grade', '--input', items, '--judge', 'openai:gpt-4.1-mini', '--judge-base-url', model.baseUrl, '--no-cache', '--out', join(tempDir, 'real.jsonl'), '--metrics', join(tempDir, 'real.json')]);
    expect(real.stderr).not.toContain('made up');
    expect(readJson(join(tempDir, 'real.json'))).not.toHaveProperty('scripted');
  });
});
