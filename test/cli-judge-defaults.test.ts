/**
 * No surprise model download: a command that needs a judge, given none and with none configured,
 * stops with exit 2 before anything is built or written, and lists the ways forward (an endpoint,
 * the local model with its size, the scripted judge). `rejudge` and `align` given no judge reuse
 * the one recorded in the results they read, and say so in one line.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect } from 'vitest';
import { exitCodes } from '../src/errors.js';
import { defaultLocalModelSize } from '../src/judges/llamacpp/default-model.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { projectRoot, runCliInProcess } from './helpers.js';

const examples = resolve(projectRoot, 'examples');
const items = join(examples, 'items.jsonl');

/** The three ways forward, for the flag of the role that was missing. */
function expectWaysForward(stderr: string, flag: '--judge' | '--generator'): void {
  expect(stderr).toMatch(/^error \[CONFIG_INVALID\]: field (judge|generator): no (judge|generator) given/m);
  expect(stderr).toContain(`${flag} openai:MODEL with OPENAI_BASE_URL`);
  expect(stderr).toContain(`${flag} gguf:default (`);
  expect(stderr).toContain(defaultLocalModelSize);
  expect(stderr).toContain(`${flag} scripted, or \`rubricate fake-judge\``);
}

describe('no judge given and none configured', () => {
  test('grade stops with exit 2 before anything is written or cached, and lists the ways forward', async ({ tempDir }) => {
    const out = join(tempDir, 'results.jsonl');
    const result = await runCliInProcess(['grade', '--input', items, '--out', out, '--metrics', join(tempDir, 'metrics.json')]);
    expect(result.code).toBe(exitCodes.usage);
    expectWaysForward(result.stderr, '--judge');
    expect(result.stderr).toContain('--judge none grades deterministic checks only');
    expect(readdirSync(tempDir)).toEqual([]);
  });

  test('generate without --generator says the same for the generator', async ({ tempDir }) => {
    const result = await runCliInProcess(['generate', '--input', join(examples, 'prompts/prompts.jsonl'), '--out', join(tempDir, 'generated.jsonl')]);
    expect(result.code).toBe(exitCodes.usage);
    expectWaysForward(result.stderr, '--generator');
    expect(existsSync(join(tempDir, 'generated.jsonl'))).toBe(false);
  });

  test('RUBRICATE_MODEL names a local model: that is a choice, so the rule goes on to it', async ({ tempDir }) => {
    process.env.RUBRICATE_MODEL = join(tempDir, 'missing.gguf');
    const result = await runCliInProcess(['grade', '--input', items, '--quiet', '--out', join(tempDir, 'results.jsonl')]).finally(() => delete process.env.RUBRICATE_MODEL);
    // The file named does not exist: the local judge's own error, not the "choose one" list.
    expect(result.stderr).not.toMatch(/no judge given/);
    expect(result.stderr).toMatch(/JUDGE_UNAVAILABLE/);
  });
});

describe('rejudge and align reuse the judge recorded in their results; meta names it', () => {
  test('each says which judge it reuses, in one line, and grades with it', async ({ tempDir }) => {
    const results = join(tempDir, 'results.jsonl');
    const graded = await runCliInProcess(['grade', '--input', join(examples, 'meta/items.jsonl'), '--judge', 'scripted:unmet', '--quiet', '--out', results]);
    expect(graded.code, graded.stderr).toBe(0);

    const rejudged = join(tempDir, 'rejudged.jsonl');
    const rejudge = await runCliInProcess(['rejudge', '--input', results, '--quiet', '--out', rejudged]);
    expect(rejudge.code, rejudge.stderr).toBe(0);
    expect(rejudge.stderr.split('\n').filter((line) => line.startsWith('judge: '))).toEqual([`judge: scripted:unmet, as recorded in ${results} (no --judge given; give one to grade with another)`]);
    const lines = readFileSync(rejudged, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { judge: { id: string } });
    expect(new Set(lines.map((line) => line.judge.id))).toEqual(new Set(['scripted:unmet']));

    const align = await runCliInProcess(['align', '--input', results, '--labels', join(examples, 'meta/labels.jsonl'), '--out', join(tempDir, 'alignment.json')]);
    expect(align.code, align.stderr).toBe(0);
    expect(align.stderr).toContain(`judge: scripted:unmet, as recorded in ${results}`);
    expect((JSON.parse(readFileSync(join(tempDir, 'alignment.json'), 'utf8')) as { fit: { judge: string } }).fit.judge).toBe('scripted:unmet');

    // meta calls no judge on a results file: it says whose verdicts it measures.
    const meta = await runCliInProcess(['meta', '--format', 'results', '--input', results, '--labels', join(examples, 'meta/labels.jsonl'), '--out', join(tempDir, 'meta.json')]);
    expect(meta.code, meta.stderr).toBe(0);
    expect(meta.stderr).toContain(`judge: scripted:unmet, as recorded in ${results} (its verdicts are measured; no judge is called)`);

    // A judge given wins, and nothing is said about the recorded one.
    const other = await runCliInProcess(['rejudge', '--input', results, '--judge', 'scripted:met', '--quiet', '--out', join(tempDir, 'other.jsonl')]);
    expect(other.code, other.stderr).toBe(0);
    expect(other.stderr).not.toContain('as recorded in');
  });

  test('a recorded judge that would download a model is not reused: the command stops and says why', async ({ tempDir }) => {
    const results = join(tempDir, 'results.jsonl');
    const line = JSON.parse(readFileSync(join(examples, 'results/results.jsonl'), 'utf8').split('\n')[0]) as Record<string, unknown> & { judge: Record<string, unknown> };
    writeFileSync(results, `${JSON.stringify({ ...line, judge: { ...line.judge, id: 'gguf:hf:someone/some-model:Q4_K_M' } })}\n`);
    const result = await runCliInProcess(['rejudge', '--input', results, '--out', join(tempDir, 'rejudged.jsonl')]);
    expect(result.code).toBe(exitCodes.usage);
    expect(result.stderr).toContain('judge: not reusing the one recorded in');
    expect(result.stderr).toContain('would be downloaded: give --judge gguf:hf:someone/some-model:Q4_K_M to choose it');
    expectWaysForward(result.stderr, '--judge');
  });
});
