import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect } from 'vitest';
import { runCliCaptured } from '../cli/in-process.js';
import type { FakeJudgeRequest } from '../testing/fake-judge.js';
import { test } from '../testing/vitest-fixtures.js';
import { Grader } from '../pipeline/grader.js';
import { readPreferencePairs } from './contrastive.js';
import { distillRubric } from './distill.js';
import { answer, fencedBlocks, generatorAndJudge, mentions, taskOf, type FakeCriterion } from './fixtures/fake-generator.js';
import { binaryVerdict } from '../testing/fake-judge.js';
import { createRubricGenerator } from './generator.js';

const pairs = resolve(__dirname, 'fixtures/distill-pairs.jsonl');

/**
 * The fixture pairs (evaluation order a1 b1 c1 d1 a2 b2 c2 d2, round-robin over the prompts) and the
 * keyword judge make every verdict vector known in advance:
 * - "because" and "example": met by every preferred response, and by both responses of d1/d2 →
 *   the same vector [1,1,1,0,1,1,1,0]: duplicates for the coding rate, so only one is selected;
 * - "sorry" (Pitfall): met by the rejected responses of a1/a2 → aligned;
 * - "weather": met by none → tells no pair apart → revised; "short": met by the rejected responses of
 *   b1/b2 → misaligned → revised; the revisions: "detail" (aligned on c1/c2) and "lengthy" (met by none);
 * - d1 and d2 are then saturated (both responses pass every aligned criterion): hardening writes
 *   "source" (preferred of d1/d2 only: orthogonal to "because") and an unverifiable hard rule
 *   ("truly cites evidence", aligned on b1/b2), which lint drops from the selected set.
 */
function distillScript(proposals: { count: number }) {
  return generatorAndJudge((request: FakeJudgeRequest, task) => {
    if (task === 'contrastive') {
      const chosen = fencedBlocks(request, 'preferred')[0] ?? '';
      return { content: answer([...new Set(chosen.match(/[A-Za-z]{5,}/g) ?? [])].slice(0, 3).map((word) => mentions(word))) };
    }
    if (task === 'distill') {
      proposals.count += 1;
      // The second proposal repeats the first with "because" as Essential: the merge keeps the higher points.
      const because = proposals.count === 2 ? mentions('because', 'Essential') : mentions('because');
      return { content: answer([because, mentions('example'), mentions('weather'), mentions('short'), mentions('sorry', 'Pitfall')]) };
    }
    if (task === 'distill-revise') return { content: answer([mentions('detail'), mentions('lengthy')]) };
    if (task === 'distill-harden') {
      const unverifiable: FakeCriterion = { text: 'The response truly cites "evidence".', importance: 'Important', kind: 'hard_rule', check: null };
      return { content: answer([mentions('source'), unverifiable]) };
    }
    return { status: 500, body: { error: { message: `unexpected task ${task}` } } };
  });
}

describe('generate --distill', () => {
  test('proposes, evaluates on the labelled pairs, revises, hardens, selects by coding rate and lints: every step in the report', async ({ startJudge, tempDir }) => {
    const proposals = { count: 0 };
    const fake = await startJudge(distillScript(proposals));
    const given = join(tempDir, 'given.jsonl');
    const rubric = { id: 'leaves', criteria: [{ text: 'Mentions chlorophyll.', points: 2 }] };
    writeFileSync(given, `${JSON.stringify({ id: 'x', prompt: 'Why do leaves change colour in autumn?', rubric })}\n${JSON.stringify({ id: 'y', prompt: 'Not a prompt of the pairs', rubric })}\n`);
    const out = join(tempDir, 'general.jsonl');
    const summary = join(tempDir, 'distill.json');
    const flags = ['--format', 'pairs', '--input', pairs, '--generator', 'openai:writer', '--generator-base-url', fake.baseUrl, '--judge', 'openai:grader', '--judge-base-url', fake.baseUrl, '--cache', join(tempDir, 'cache.sqlite'), '--min-criteria', '1'];
    const run = await runCliCaptured(['generate', '--distill', ...flags, '--distill-rubrics', given, '--distill-samples', '2', '--out', out, '--summary', summary]);
    expect(run.stderr).toContain('prompt rubrics: 1 given, 3 generated, 0 failed');
    expect(run.stderr).toMatch(/lint: dropped d\d+ \[hard-rule-unverifiable\]/);
    expect(run.code).toBe(0);

    const written = readFileSync(out, 'utf8').trim().split('\n');
    expect(written).toHaveLength(1);
    const distilled = JSON.parse(written[0]) as { metadata: { generic: boolean }; criteria: Array<{ text: string; points: number; metadata: { distill: Record<string, unknown>; merge?: { sources: string[] } } }> };
    expect(distilled.metadata.generic).toBe(true);
    const texts = distilled.criteria.map((criterion) => criterion.text);
    expect(texts).toEqual(['because', 'source', 'sorry', 'detail'].map((word) => `The response mentions "${word}".`));
    // Merged from both proposals, the higher points kept.
    expect(distilled.criteria[0].points).toBe(5);
    expect(distilled.criteria[0].metadata.merge?.sources.sort()).toEqual(['openai:writer#1', 'openai:writer#2']);
    expect(distilled.criteria[0].metadata.distill).toMatchObject({ origin: 'propose', agree: 6, disagree: 0, ties: 2, errors: 0, accuracy: 1 });
    expect(distilled.criteria[1].metadata.distill).toMatchObject({ origin: 'harden', hardened_on_pair: 'd1', agree: 2 });
    expect(distilled.criteria[3].metadata.distill).toMatchObject({ origin: 'revise', revised_from: 'd3', agree: 2 });

    const report = JSON.parse(readFileSync(summary, 'utf8'));
    expect(report.input).toMatchObject({ pairs: 8, prompts: 4, prompts_used: 4, pairs_used: 8, rubrics_given: 1, rubrics_generated: 3 });
    expect(report.merge).toEqual({ proposals: 2, proposed: 10, duplicates: 5, clamped: 0 });
    expect(report.hardening).toEqual({ saturated_pairs: 2, pairs_used: 2, proposed: 2 });
    const status = Object.fromEntries(report.candidates.map((candidate: { text: string; status: string }) => [/"([^"]+)"/.exec(candidate.text)![1], candidate.status]));
    expect(status).toEqual({ because: 'selected', example: 'redundant', weather: 'revised', short: 'revised', sorry: 'selected', detail: 'selected', lengthy: 'undecided', source: 'selected', evidence: 'lint_dropped' });
    expect(report.lint.dropped).toEqual([expect.objectContaining({ rule: 'hard-rule-unverifiable' })]);
    expect(report.ordering.distilled).toEqual({ correct: 8, wrong: 0, ties: 0, errors: 0, accuracy: 1 });
    expect(report.selection.selected).toBe(4);

    // The distilled rubric is a rubrics file `rubricate lint` reads; its remaining findings are warnings.
    const linted = await runCliCaptured(['lint', '--format', 'rubrics', '--input', out, '--generic']);
    expect(linted.code).toBe(0);
  });

  test('refuses prompts input, --dry-run, and --distill-* flags without --distill, by name', async ({ tempDir }) => {
    const base = ['--generator', 'scripted', '--judge', 'scripted', '--no-cache', '--out', join(tempDir, 'out.jsonl')];
    const prompts = await runCliCaptured(['generate', '--distill', '--input', resolve(__dirname, 'fixtures/prompts.jsonl'), ...base]);
    expect(prompts.code).toBe(2);
    expect(prompts.stderr).toContain('--distill reads labelled pairs');
    const dry = await runCliCaptured(['generate', '--distill', '--format', 'pairs', '--input', pairs, ...base, '--dry-run']);
    expect(dry.code).toBe(2);
    expect(dry.stderr).toContain('--dry-run');
    const stray = await runCliCaptured(['generate', '--format', 'pairs', '--input', pairs, ...base, '--distill-pairs', '4']);
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain('--distill-pairs applies to --distill only');
    const unread = await runCliCaptured(['generate', '--distill', '--format', 'pairs', '--input', pairs, ...base, '--attempts', '2']);
    expect(unread.code).toBe(2);
    expect(unread.stderr).toContain('--attempts is not read by --distill');
  });
});

describe('distillRubric (library): several generators', () => {
  test('merges the proposals of two generators (higher points kept, clamped to the range), reports a failing one, and caps prompts and pairs before any call', async ({ startJudge, connectJudge }) => {
    let contrastCalls = 0;
    const fake = await startJudge(
      generatorAndJudge((request, task) => {
        const model = (request.body as { model?: string }).model;
        if (task === 'contrastive') {
          contrastCalls += 1;
          return { content: answer([mentions('because')]) };
        }
        if (task !== 'distill') return { content: answer([]) };
        if (model === 'writer-c') return { status: 400, body: { error: { message: 'this writer is broken' } } };
        return { content: answer(model === 'writer-a' ? [mentions('because'), mentions('sorry', 'Pitfall')] : [mentions('because', 'Essential'), mentions('example')]) };
      }),
    );
    const generators = ['writer-a', 'writer-b', 'writer-c'].map((model) => createRubricGenerator({ generator: connectJudge(fake, { model }), minCriteria: 1, maxCriteria: 5, retryBaseDelayMs: 1, maxAttempts: 1 }));
    const grader = new Grader({ judge: connectJudge(fake, { model: 'judge' }), scoring: 'weighted_mean', calls: { retryBaseDelayMs: 1 } });
    const { pairs } = await readPreferencePairs(resolve(__dirname, 'fixtures/distill-pairs.jsonl'), 'pairs');
    const notices: string[] = [];
    const { rubric, report } = await distillRubric({ pairs }, { generators, grader, limits: { prompts: 2, pairs: 3, hardenPairs: 0 }, range: { min: -2, max: 4 }, onNotice: (message) => notices.push(message) });

    expect(contrastCalls).toBe(2);
    expect(report.input).toMatchObject({ prompts: 4, prompts_used: 2, pairs_used: 3 });
    expect(report.generators).toEqual(['openai:writer-a', 'openai:writer-b', 'openai:writer-c']);
    expect(report.merge).toEqual({ proposals: 3, proposed: 4, duplicates: 1, clamped: 1 });
    expect(notices.some((message) => message.startsWith('proposal of openai:writer-c#1 failed: [') && message.includes('this writer is broken'))).toBe(true);
    const because = report.candidates.find((candidate) => String(candidate.text).includes('"because"'))!;
    // writer-b's Essential (5 points) is kept over writer-a's Important (3), then clamped to 4.
    expect(because).toMatchObject({ points: 4, sources: ['openai:writer-a#1', 'openai:writer-b#1'], agree: 3, disagree: 0, status: 'selected' });
    const merged = rubric!.criteria.find((criterion) => criterion.text.includes('"because"'))!;
    expect(merged.metadata?.merge).toMatchObject({ clamped_from: 5, merged: [{ source: 'openai:writer-a#1', points: 3 }] });
  });
});

describe('distillRubric (library): failed verdicts on the labelled pairs', () => {
  test('are said with their count (counted for neither response); when every one fails, the judge is the error, not the rubric', async ({ startJudge, connectJudge }) => {
    const failing = { all: false };
    const fake = await startJudge((request) => {
      const task = taskOf(request);
      if (task === 'grade' && (failing.all || request.response?.includes('maples'))) return { status: 500, body: { error: { message: 'judge down' } } };
      if (task === 'grade') return { content: binaryVerdict(request.response?.includes('because') ?? false) };
      if (task === 'distill') return { content: answer([mentions('because')]) };
      return { content: answer([mentions('because')]) };
    });
    const generators = [createRubricGenerator({ generator: connectJudge(fake, { model: 'writer' }), minCriteria: 1, maxCriteria: 5, retryBaseDelayMs: 1, maxAttempts: 1 })];
    const grader = new Grader({ judge: connectJudge(fake, { model: 'judge' }), scoring: 'weighted_mean', calls: { retryBaseDelayMs: 1, maxAttempts: 1 } });
    const { pairs } = await readPreferencePairs(resolve(__dirname, 'fixtures/distill-pairs.jsonl'), 'pairs');
    const notices: string[] = [];
    await distillRubric({ pairs }, { generators, grader, limits: { hardenPairs: 0 }, onNotice: (message) => notices.push(message) });
    // Only pair a1's preferred response names maples: its verdict fails, the other pairs' do not.
    expect(notices.find((message) => /^\d+ of \d+ verdicts on the labelled pairs failed \(the judge's errors\)/.test(message))).toMatch(/^1 of \d+ verdicts/);

    failing.all = true;
    const error = await distillRubric({ pairs }, { generators, grader, limits: { hardenPairs: 0 } }).then(
      () => undefined,
      (caught: { code?: string; message: string }) => caught,
    );
    expect(error).toMatchObject({ code: 'RUBRIC_NOT_DISTILLED', message: expect.stringMatching(/no candidate could be evaluated; \d+ verdicts on the labelled pairs failed \(all \d+/) });
  });
});
