/**
 * `rubricate meta` on RewardBench 2 and RM-Bench with a loopback judge that rates a response by
 * the "(quality N)" it ends with: the reports equal the hand-computed parity values of
 * src/meta/best-of-n.test.ts; ranking four at once picks per prompt; the length baselines are in
 * every report, also without a judge and for a pairwise set.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { shownCandidates } from '../src/meta/best-of-n.js';
import { rewardbench2Importer } from '../src/formats/rewardbench2.js';
import type { FakeJudgeRequest } from '../src/testing/fake-judge.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { projectRoot, runCliInProcess } from './helpers.js';

const rewardbench2 = join(projectRoot, 'examples/rewardbench2/sample.jsonl');
const rmBench = join(projectRoot, 'examples/rm-bench/sample.json');
const quality = (text: string) => Number(/\(quality (\d+)\)/.exec(text)![1]);

/** Rates a single response by its quality mark; of four, picks the first of the highest. */
function judgeByQuality(request: FakeJudgeRequest) {
  const shown = [...request.userText.matchAll(/<response-([A-D])-[0-9a-f]{16}>\n([\s\S]*?)\n<\/response-\1-/g)];
  if (shown.length === 4) {
    const best = shown.reduce((top, entry) => (quality(entry[2]) > quality(top[2]) ? entry : top));
    return { content: { explanation: 'Best one.', best: best[1] } };
  }
  return { content: { explanation: 'Rated.', choice: String(quality(request.response!)) } };
}

describe('meta on best-of-N benchmarks', () => {
  test('RewardBench 2: the judge\'s ratings scored by the reference aggregation, beside the length baselines', async ({ startJudge, tempDir }) => {
    const fake = await startJudge(judgeByQuality);
    const out = join(tempDir, 'rb2.json');
    const result = await runCliInProcess(['meta', '--format', 'rewardbench2', '--input', rewardbench2, '--out', out, '--judge', 'openai:fake', '--judge-base-url', fake.baseUrl, '--no-cache', '--quiet']);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(readFileSync(out, 'utf8'));
    expect(report.run).toMatchObject({ judging: 'ratings', sets: 10, judged: 10, errors: 0 });
    // One call per response, but ref:1 and tied:1 share the same prompt and answer "Red.": asked once.
    expect(fake.requests).toHaveLength(4 * 6 + 3 + 5 + 3 + 4 - 1);
    const ties = 0.3 * 0.5 + 0.3 * 0.5 + 0.2 * 0.5 + 0.2 * 0.5 + 0.01 * ((Math.tanh(2) - 1) / 2);
    expect(report.scores.subsets.Factuality.score).toBe(0.75);
    expect(report.scores.subsets.Ties.score).toBeCloseTo(ties, 15);
    expect(report.scores.overall).toBeCloseTo((0.75 + 0.25 + 1 / 3 + 0 + 1 + ties) / 6, 15);
    expect(report.baselines.longer.subsets.Safety.score).toBe(1);
    expect(report.baselines.shorter.subsets).toHaveProperty('Ties');
    expect(report.judge).toMatchObject({ id: 'openai:fake', mode: 'per-criterion' });
  });

  test('RewardBench 2 ranking four at once: one call per non-Ties prompt, Ties still rated', async ({ startJudge, tempDir }) => {
    const fake = await startJudge(judgeByQuality);
    const out = join(tempDir, 'rank.json');
    const result = await runCliInProcess(['meta', '--format', 'rewardbench2', '--judging', 'rank-four', '--input', rewardbench2, '--out', out, '--judge', 'openai:fake', '--judge-base-url', fake.baseUrl, '--no-cache', '--quiet']);
    expect(result.code, result.stderr).toBe(0);
    expect(fake.requests).toHaveLength(6 + (3 + 5 + 3 + 4 - 1));
    const report = JSON.parse(readFileSync(out, 'utf8'));
    // The judge picks the first of the highest as shown: correct when that is the chosen response.
    const expected: Record<string, boolean> = {};
    for await (const record of rewardbench2Importer.read(rewardbench2)) {
      if (record.kind !== 'set' || record.set.subset === 'Ties') continue;
      const shown = shownCandidates(record.set).map(quality);
      expected[record.set.id] = record.set.responses[0] === shownCandidates(record.set)[shown.indexOf(Math.max(...shown))];
    }
    const picked = Object.fromEntries(report.judgments.filter((judgment: { subset: string }) => judgment.subset !== 'Ties').map((judgment: { id: string; pickedCorrect: boolean }) => [judgment.id, judgment.pickedCorrect]));
    expect(picked).toEqual(expected);
    expect(picked).toMatchObject({ f1: true, p1: false, s1: true });
    expect(report.scores.subsets.Safety.score).toBe(1);
  });

  test('RM-Bench: the style matrix from the judge\'s ratings; Overall 0.625 as worked out by hand', async ({ startJudge, tempDir }) => {
    const fake = await startJudge(judgeByQuality);
    const out = join(tempDir, 'rm.json');
    const result = await runCliInProcess(['meta', '--format', 'rm-bench', '--input', rmBench, '--out', out, '--judge', 'openai:fake', '--judge-base-url', fake.baseUrl, '--no-cache', '--quiet']);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(readFileSync(out, 'utf8'));
    expect(report.scores.overall.total_avg_acc).toBeCloseTo(0.625, 15);
    expect(report.scores.domains.chat.matrix).toEqual([[0.5, 0.5, 0], [1, 1, 0.5], [1, 1, 0.5]]);
    expect(Object.keys(report.baselines)).toEqual(['longer', 'shorter']);
    const ranked = await runCliInProcess(['meta', '--format', 'rm-bench', '--judging', 'rank-four', '--input', rmBench, '--out', join(tempDir, 'no.json'), '--judge', 'openai:fake', '--judge-base-url', fake.baseUrl, '--no-cache', '--quiet']);
    expect(ranked.code).toBe(2);
    expect(ranked.stderr).toMatch(/rank-four is RewardBench 2's/);
  });

  test('without a judge, the baselines alone; a pairwise set\'s report has them too', async ({ startJudge, tempDir }) => {
    const alone = join(tempDir, 'baselines.json');
    const baselines = await runCliInProcess(['meta', '--format', 'rm-bench', '--input', rmBench, '--out', alone, '--quiet']);
    expect(baselines.code, baselines.stderr).toBe(0);
    expect(JSON.parse(readFileSync(alone, 'utf8')).baselines.longer.overall).toHaveProperty('total_avg_acc');
    const fake = await startJudge(() => ({ content: { explanation: 'x', winner: '1' } }));
    const out = join(tempDir, 'pairs.json');
    const pairs = await runCliInProcess(['meta', '--format', 'pairs', '--input', join(projectRoot, 'examples/pairs/pairs.jsonl'), '--out', out, '--judge', 'openai:fake', '--judge-base-url', fake.baseUrl, '--no-cache', '--quiet']);
    expect(pairs.code, pairs.stderr).toBe(0);
    const report = JSON.parse(readFileSync(out, 'utf8'));
    // pair-1: A is longer and right; pair-2: "15" and "13" are as long, a tie against B.
    expect(report.baselines.longer.overall.accuracy.original).toBe(0.5);
    expect(report.baselines.shorter.overall.accuracy.original).toBe(0);
    // Pairs are compared as compare compares them: a rating setting is refused, not dropped.
    const rated = await runCliInProcess(['meta', '--format', 'pairs', '--input', join(projectRoot, 'examples/pairs/pairs.jsonl'), '--out', join(tempDir, 'no.json'), '--judge', 'openai:fake', '--judge-base-url', fake.baseUrl, '--verdict', 'expected-score', '--no-cache', '--quiet']);
    expect(rated.code).toBe(2);
    expect(rated.stderr).toMatch(/--verdict does not apply to a pairwise set/);
  });
});
