import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect } from 'vitest';
import { Grader } from '../pipeline/grader.js';
import type { FakeJudgeAction, FakeJudgeRequest } from '../testing/fake-judge.js';
import { test as base } from '../testing/vitest-fixtures.js';
import { contrastGroup, formatContrastiveSummary, groupPairs, readPreferencePairs, summarizeContrastive, type PairGroup, type PreferencePair } from './contrastive.js';
import { answer, fencedBlocks, generatorAndJudge, mentions } from './fixtures/fake-generator.js';
import { createRubricGenerator, type RubricGenerator } from './generator.js';

const fixtures = resolve(__dirname, 'fixtures');

/** Distinctive words of a text: the generator's "criteria" are about these. */
function wordsOf(text: string): string[] {
  return [...new Set(text.match(/[A-Za-z]{4,}/g) ?? [])].slice(0, 3);
}

type Override = (request: FakeJudgeRequest, attempt: number) => FakeJudgeAction | undefined;

/**
 * `setup(badAttempts, overrides)`: a fake server, generator and judge in one. Generator: for
 * each pair, the first `badAttempts` contrastive answers reward the rejected response's words
 * (so they order the pair wrongly), later ones reward the chosen response's. Judge: keyword verdicts.
 */
const test = base.extend<{ setup: (badAttempts: number, overrides?: Override) => Promise<{ generator: RubricGenerator; grader: Grader }> }>({
  setup: async ({ startJudge, connectJudge }, use) => {
    await use(async (badAttempts, overrides = () => undefined) => {
      const attemptsByPair = new Map<string, number>();
      const fake = await startJudge(
        generatorAndJudge((request) => {
          const chosen = fencedBlocks(request, 'preferred')[0];
          const rejected = fencedBlocks(request, 'rejected')[0];
          const attempt = attemptsByPair.get(chosen) ?? 0;
          attemptsByPair.set(chosen, attempt + 1);
          const override = overrides(request, attempt);
          if (override) return override;
          return { content: answer(wordsOf(attempt < badAttempts ? rejected : chosen).map((word) => mentions(word))) };
        }),
      );
      const generator = createRubricGenerator({ generator: connectJudge(fake, { model: 'writer' }), minCriteria: 1, maxCriteria: 5, retryBaseDelayMs: 1, maxAttempts: 2 });
      const grader = new Grader({ judge: connectJudge(fake, { model: 'judge' }), scoring: 'weighted_mean', calls: { retryBaseDelayMs: 1 } });
      return { generator, grader };
    });
  },
});

const pair = (id: string, prompt: string, chosen: string, rejected: string): PreferencePair => ({ id, prompt: [{ role: 'user', content: prompt }], chosen, rejected, line: 1 });

describe('readPreferencePairs', () => {
  test('reads our JSONL pairs and reports bad lines with their location', async ({ tempDir }) => {
    const { pairs, summary } = await readPreferencePairs(join(fixtures, 'pairs.jsonl'));
    expect(pairs.map((entry) => entry.id)).toEqual(['pair-1', 'pair-2', 'pair-3', 'pair-4']);
    expect(pairs[0].prompt).toEqual([{ role: 'user', content: 'Name a primary colour and say why it is primary.' }]);
    expect(summary).toMatchObject({ records: 4, pairs: 4, ties: 0, invalid: [] });

    const file = join(tempDir, 'pairs.jsonl');
    writeFileSync(file, '{"prompt": "q", "chosen": "a", "rejected": "b"}\n{"prompt": "q", "chosen": "a"}\nnot json\n');
    const read = await readPreferencePairs(file);
    expect(read.pairs).toHaveLength(1);
    expect(read.pairs[0].id).toBe('pair-1');
    expect(read.summary.invalid.map((error) => [error.details.line, error.details.field ?? null])).toEqual([[2, 'rejected'], [3, null]]);
  });

  test('reads a pairwise benchmark through its importer: the gold winner becomes chosen, ties are skipped', async ({ tempDir }) => {
    const file = join(tempDir, 'autoj.jsonl');
    const rows = [
      { scenario: 'chat', label: 1, prompt: 'p1', 'response 1': 'first', 'response 2': 'second' },
      { scenario: 'chat', label: 2, prompt: 'p2', 'response 1': 'x', 'response 2': 'y' },
      { scenario: 'code', label: 0, prompt: 'p3', 'response 1': 'good', 'response 2': 'bad' },
    ];
    writeFileSync(file, rows.map((row) => JSON.stringify(row)).join('\n'));
    const { pairs, summary } = await readPreferencePairs(file, 'autoj');
    expect(summary).toMatchObject({ records: 3, pairs: 2, ties: 1 });
    expect(pairs.map((entry) => [entry.chosen, entry.rejected, entry.source])).toEqual([
      ['second', 'first', 'chat'],
      ['good', 'bad', 'code'],
    ]);
  });
});

describe('groupPairs', () => {
  test('per-prompt: the first pair of a prompt generates, the others are held out', async () => {
    const { pairs } = await readPreferencePairs(join(fixtures, 'pairs.jsonl'));
    const groups = groupPairs(pairs, 'per-prompt');
    expect(groups.map((group) => [group.generation.id, group.heldOut.map((entry) => entry.id)])).toEqual([
      ['pair-1', ['pair-2', 'pair-4']],
      ['pair-3', []],
    ]);
    expect(groupPairs(pairs, 'none')).toHaveLength(4);
  });
});

describe('contrastGroup (rejection sampling through the real grading pipeline)', () => {
  const group: PairGroup = {
    generation: pair('g', 'Describe a fruit.', 'Mango nectar sweetness', 'Potato starch blandness'),
    heldOut: [pair('h1', 'Describe a fruit.', 'Mango orchard', 'Turnip field'), pair('h2', 'Describe a fruit.', 'Cabbage Potato', 'Mango starch'), pair('h3', 'Describe a fruit.', 'plain', 'plain')],
  };

  test('keeps the first rubric under which the chosen response scores strictly higher', async ({ setup }) => {
    const { generator, grader } = await setup(1);
    const outcome = await contrastGroup(group, { generator, grader, attempts: 3 });
    expect(outcome.kept).toBe(true);
    expect(outcome.attempts_used).toBe(2);
    expect(outcome.attempts.map((attempt) => [attempt.outcome, attempt.chosen_score, attempt.rejected_score])).toEqual([
      ['inconsistent', 0, 1],
      ['consistent', 1, 0],
    ]);
    expect(outcome.rubric!.criteria.map((criterion) => criterion.text)).toEqual(['The response mentions "Mango".', 'The response mentions "nectar".', 'The response mentions "sweetness".']);
    expect(outcome.rubric!.metadata?.generation).toMatchObject({ method: 'contrastive', prompt_version: 'contrastive/v1', sample: 1, pair_id: 'g', attempt: 2 });
    // Held out: h1 chosen mentions Mango (1/3 vs 0), h2 reversed, h3 a tie.
    expect(outcome.held_out.map((record) => record.outcome)).toEqual(['correct', 'wrong', 'tie']);
    // One verdict per criterion per graded response; h3's two identical responses share calls.
    expect(outcome.judge_usage.calls + outcome.judge_usage.cache_hits).toBe(2 * 2 * 3 + 3 * 2 * 3);
  });

  test('gives up after k attempts and tests nothing on held-out pairs', async ({ setup }) => {
    const { generator, grader } = await setup(5);
    const outcome = await contrastGroup(group, { generator, grader, attempts: 2 });
    expect(outcome).toMatchObject({ kept: false, attempts_used: 2, held_out: [] });
    expect(outcome.rubric).toBeUndefined();
    expect(outcome.attempts.map((attempt) => attempt.outcome)).toEqual(['inconsistent', 'inconsistent']);
  });

  test('records an attempt whose generation failed, and carries on with the next sample', async ({ setup }) => {
    const { generator, grader } = await setup(0, (_request, attempt) => (attempt < 2 ? { content: 'not a rubric' } : undefined));
    const outcome = await contrastGroup({ generation: group.generation, heldOut: [] }, { generator, grader, attempts: 3 });
    expect(outcome.attempts.map((attempt) => attempt.outcome)).toEqual(['generation_error', 'consistent']);
    expect(outcome.attempts[0].error?.code).toBe('JUDGE_UNPARSEABLE');
    expect(outcome.kept).toBe(true);
  });

  test('summarises keep rate, attempts, first-attempt consistency and held-out accuracy', async ({ setup }) => {
    const { generator, grader } = await setup(1);
    const groups: PairGroup[] = [group, { generation: pair('solo', 'Name a vegetable.', 'Carrot crunch', 'Lemon zest'), heldOut: [] }];
    const outcomes = [];
    for (const entry of groups) outcomes.push(await contrastGroup(entry, { generator, grader, attempts: 1 }));
    const report = summarizeContrastive(outcomes, {
      source: 'pairs.jsonl',
      format: 'pairs',
      readSummary: { records: 5, pairs: 5, ties: 0, unlabelled: 0, invalid: [] },
      groups: 2,
      heldOutPairs: 3,
      split: 'per-prompt',
      attempts: 1,
      generator,
      grader,
    });
    // With one attempt and a generator that is wrong first, nothing is kept.
    expect(report.generation).toMatchObject({ pairs: 2, kept: 0, keep_rate: 0, not_kept: 2, attempts: { total: 2, histogram: { '1': 0, not_kept: 2 } } });
    expect(report.generation.first_attempt).toMatchObject({ n: 2, consistent: 0, rate: 0 });
    expect(report.evaluation.held_out).toMatchObject({ pairs: 0, accuracy: null });
    expect(report.judge).toMatchObject({ id: 'openai:judge' });

    // A fresh server and grader: no verdict cached from the run above.
    const fresh = await setup(1);
    const kept = await contrastGroup(group, { generator: fresh.generator, grader: fresh.grader, attempts: 3 });
    const second = summarizeContrastive([kept], reportContext(fresh.generator, fresh.grader));
    expect(second.generation).toMatchObject({ kept: 1, keep_rate: 1, attempts: { total: 2, mean_per_kept_pair: 2, histogram: { '1': 0, '2': 1, '3': 0, not_kept: 0 } } });
    expect(second.evaluation.held_out).toMatchObject({ rubrics: 1, pairs: 3, graded: 3, correct: 1, wrong: 1, ties: 1, accuracy: 0.333333, accuracy_ties_half: 0.5 });
    expect(second.pairs[0]).toMatchObject({ pair_id: 'g', kept: true, criteria: 3 });
    expect(second.pairs[0]).not.toHaveProperty('rubric');
    const text = formatContrastiveSummary(second);
    expect(text).toContain('kept: 1 of 1 (100.0%) within 3 attempts');
    expect(text).toContain('held-out pairs (same prompt, not used for generation): 1 of 3 correct (33.3%');
  });
});

function reportContext(generator: RubricGenerator, grader: Grader) {
  return {
    source: 'x',
    format: 'pairs',
    readSummary: { records: 4, pairs: 4, ties: 0, unlabelled: 0, invalid: [] },
    groups: 1,
    heldOutPairs: 3,
    split: 'per-prompt' as const,
    attempts: 3,
    generator,
    grader,
  };
}
