/**
 * `grade --repeats N`: each repeat cached apart, and a stability summary that measures what a
 * scripted judge does: a judge whose second answer flips a known share of verdicts reports that
 * share as its flip rate; a deterministic judge reports none.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { binaryVerdict, type FakeJudgeRequest } from '../src/testing/fake-judge.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { runCliInProcess } from './helpers.js';

interface Line {
  id: string;
  score: number | null;
  repeat_scores?: Array<number | null>;
  criteria: Array<{ id: string; met: boolean | null; repeats?: Array<boolean | null> }>;
  usage: { calls: number };
}

interface Stability {
  repeats: number;
  verdicts: { pairs: number; flip_rate: number; unstable: number; by_criterion: Record<string, { pairs: number; flip_rate: number }> };
  items: { scored: number; score_range: { mean: number; max: number }; mean_score_std: number };
  threshold: { value: number; crossing: number; examples: string[] } | null;
  corpus_mean: { by_repeat: number[]; range: number; std: number };
}

const injectedShare = 0.25;

/** Whether the judge flips its second answer to this request: a fixed share of requests, chosen by their hash. */
function flipsOnSecondAnswer(userText: string): boolean {
  return Number.parseInt(createHash('sha256').update(userText).digest('hex').slice(0, 8), 16) / 2 ** 32 < injectedShare;
}

function writeItems(directory: string, count: number): string {
  const file = join(directory, 'items.jsonl');
  const criteria = ['Answers the question', 'Gives a reason', 'Is brief', 'Cites a source', 'Uses an example'].map((text, index) => ({ id: `c${index}`, text, points: index + 1 }));
  writeFileSync(file, `${Array.from({ length: count }, (_, index) => JSON.stringify({ id: `item-${index}`, prompt: `Question ${index}?`, response: `Answer ${index}.`, rubric: { criteria } })).join('\n')}\n`);
  return file;
}

/** The verdict a deterministic judge gives: met for some (item, criterion) pairs, fixed by the text. */
const truth = (request: FakeJudgeRequest) => createHash('sha256').update(`truth:${request.userText}`).digest()[0] % 2 === 0;

function readLines(file: string): Line[] {
  return readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Line);
}

describe('grade --repeats', () => {
  test('a judge that flips a known share of its second answers reports that share as its flip rate', async ({ startJudge, tempDir }) => {
    const seen = new Map<string, number>();
    let flipped = 0;
    const fake = await startJudge((request) => {
      const occurrence = seen.get(request.userText) ?? 0;
      seen.set(request.userText, occurrence + 1);
      const flip = occurrence === 1 && flipsOnSecondAnswer(request.userText);
      if (flip) flipped += 1;
      return { content: binaryVerdict(truth(request) !== flip) };
    });
    const items = writeItems(tempDir, 40);
    const out = join(tempDir, 'results.jsonl');
    const metrics = join(tempDir, 'metrics.json');
    const run = await runCliInProcess(['grade', '--input', items, '--out', out, '--metrics', metrics, '--repeats', '2', '--stability-threshold', '0.5', '--judge', 'openai:fake-judge', '--judge-base-url', fake.baseUrl, '--cache', join(tempDir, 'cache.sqlite')]);
    expect(run.code, run.stderr).toBe(0);
    expect(fake.requests).toHaveLength(400);
    const stability = (JSON.parse(readFileSync(metrics, 'utf8')) as { stability: Stability }).stability;
    // Exactly the injected flips, and their share within sampling error of the nominal share.
    expect(stability.verdicts.pairs).toBe(200);
    expect(stability.verdicts.flip_rate).toBe(flipped / 200);
    expect(Math.abs(stability.verdicts.flip_rate - injectedShare)).toBeLessThan(3 * Math.sqrt((injectedShare * (1 - injectedShare)) / 200));
    expect(stability.verdicts.unstable).toBe(stability.verdicts.flip_rate);
    expect(Object.values(stability.verdicts.by_criterion).reduce((sum, entry) => sum + entry.flip_rate * entry.pairs, 0)).toBeCloseTo(flipped, 9);
    // Scores and crossings as the results lines hold them.
    const lines = readLines(out);
    const ranges = lines.map((line) => Math.abs(line.repeat_scores![0]! - line.repeat_scores![1]!));
    expect(stability.items.score_range.mean).toBeCloseTo(ranges.reduce((sum, range) => sum + range, 0) / 40, 12);
    expect(stability.items.score_range.max).toBe(Math.max(...ranges));
    const crossing = lines.filter((line) => Math.min(...(line.repeat_scores as number[])) < 0.5 && Math.max(...(line.repeat_scores as number[])) >= 0.5).map((line) => line.id);
    expect(stability.threshold).toEqual({ value: 0.5, crossing: crossing.length, examples: crossing });
    const means = [0, 1].map((repeat) => lines.reduce((sum, line) => sum + line.repeat_scores![repeat]!, 0) / 40);
    expect(stability.corpus_mean.by_repeat[0]).toBeCloseTo(means[0], 12);
    expect(stability.corpus_mean.range).toBeCloseTo(Math.abs(means[0] - means[1]), 12);
    // Each line is the first repeat's, with both repeats' verdicts.
    expect(lines[0].criteria[0].repeats![0]).toBe(lines[0].criteria[0].met);
    expect(lines[0].score).toBe(lines[0].repeat_scores![0]);
    expect(run.stderr).toMatch(/stability over 2 repeats: verdict flip rate 0\.\d{4} over 200 verdicts/);
  });

  test('a deterministic judge reports no flips and no spread; each repeat is cached on its own', async ({ startJudge, tempDir }) => {
    const fake = await startJudge((request) => ({ content: binaryVerdict(truth(request)) }));
    const items = writeItems(tempDir, 6);
    const judge = ['--judge', 'openai:fake-judge', '--judge-base-url', fake.baseUrl, '--cache', join(tempDir, 'cache.sqlite')];
    const metrics = join(tempDir, 'metrics.json');
    const first = await runCliInProcess(['grade', '--input', items, '--out', join(tempDir, 'repeated.jsonl'), '--metrics', metrics, '--repeats', '3', ...judge]);
    expect(first.code, first.stderr).toBe(0);
    // Three repeats of the same 30 requests, each sent: the repeats do not answer each other.
    expect(fake.requests).toHaveLength(90);
    expect(new Set(fake.requests.map((request) => request.userText)).size).toBe(30);
    const stability = (JSON.parse(readFileSync(metrics, 'utf8')) as { stability: Stability }).stability;
    expect(stability).toMatchObject({ repeats: 3, verdicts: { pairs: 30, flip_rate: 0, unstable: 0 }, items: { scored: 6, score_range: { mean: 0, max: 0 }, mean_score_std: 0 }, threshold: null, corpus_mean: { range: 0, std: 0 } });
    // Every repeat's replies are cached: the same run again calls nothing, and so does the run without repeats.
    const again = await runCliInProcess(['grade', '--input', items, '--out', join(tempDir, 'again.jsonl'), '--repeats', '3', ...judge]);
    expect(again.code).toBe(0);
    const plain = await runCliInProcess(['grade', '--input', items, '--out', join(tempDir, 'plain.jsonl'), ...judge]);
    expect(plain.code).toBe(0);
    expect(fake.requests).toHaveLength(90);
    const repeated = readLines(join(tempDir, 'repeated.jsonl'));
    readLines(join(tempDir, 'plain.jsonl')).forEach((line, index) => {
      expect(line.score).toBe(repeated[index].score);
      expect(line.criteria.map((criterion) => criterion.met)).toEqual(repeated[index].criteria.map((criterion) => criterion.met));
      expect(line).not.toHaveProperty('repeat_scores');
    });
    expect(repeated[0].usage.calls).toBe(15);
  });

  test('--stability-threshold without --repeats, and --repeats with --queue, are refused by name', async ({ tempDir }) => {
    const items = writeItems(tempDir, 1);
    const alone = await runCliInProcess(['grade', '--input', items, '--out', join(tempDir, 'out.jsonl'), '--judge', 'none', '--stability-threshold', '0.5']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--stability-threshold');
    const queued = await runCliInProcess(['grade', '--input', items, '--out', join(tempDir, 'out.jsonl'), '--judge', 'none', '--repeats', '2', '--queue', 'redis://127.0.0.1:9']);
    expect(queued.code).toBe(2);
    expect(queued.stderr).toContain('--repeats');
  });
});
