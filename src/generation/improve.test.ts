/**
 * `rubricate improve` end to end on loopback models: a judge that meets a criterion when the
 * response names its keyword, and a generator whose samples and revisions name keywords. The
 * best response is kept, every round's score is recorded, and an unreadable revision is an error
 * for its round, never an unchanged response counted as improved.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { runCliCaptured } from '../cli/in-process.js';
import { binaryVerdict, type FakeJudgeRequest } from '../testing/fake-judge.js';
import { test } from '../testing/vitest-fixtures.js';
import type { Improvement } from './improve.js';

const keywords = ['fluids', 'rest', 'doctor'];

/** The judge: a criterion is met when the response names its keyword (the criterion's last word). */
const judgeScript = (request: FakeJudgeRequest) => ({ content: binaryVerdict(request.response?.includes(request.criteria[0].text.split(' ').at(-1)!) ?? false) });

function writeItems(directory: string): string {
  const file = join(directory, 'items.jsonl');
  const rubric = { criteria: keywords.map((keyword) => ({ id: keyword, text: `Mentions ${keyword}`, points: 1 })) };
  writeFileSync(file, `${JSON.stringify({ id: 'q1', prompt: 'My child has a fever. What should I do?', response: 'Give fluids.', rubric })}\n`);
  return file;
}

const readLine = (file: string) => JSON.parse(readFileSync(file, 'utf8').trim().split('\n')[0]) as { status: string; score: number; response: string; improvement: Improvement };

describe('rubricate improve', () => {
  test('best of N sampled responses, then revisions that fix what the grading found; every round scored', async ({ startJudge, tempDir }) => {
    const judge = await startJudge(judgeScript);
    const revisions: string[] = [];
    const generator = await startJudge((request) => {
      const system = request.messages[0]?.content ?? '';
      if (system.startsWith('You revise a response')) {
        // The revision prompt fences the response and the criteria it missed: add the first missing keyword.
        const missed = /- meet: Mentions (\w+)/.exec(request.userText)?.[1];
        const response = /<response-[0-9a-f]+>\n([\s\S]*?)\n<\/response-/.exec(request.userText)?.[1] ?? '';
        revisions.push(missed ?? '');
        return { content: `${response} Also: ${missed}.` };
      }
      // A sampled response: sample i (its seed) names the first i keywords.
      const sample = typeof request.body.seed === 'number' ? request.body.seed : 0;
      return { content: `Sampled answer with ${keywords.slice(0, sample % 3).join(' and ') || 'nothing useful'}.` };
    });
    const out = join(tempDir, 'improved.jsonl');
    const metrics = join(tempDir, 'metrics.json');
    const result = await runCliCaptured([
      'improve', '--input', writeItems(tempDir), '--out', out, '--metrics', metrics, '--best-of', '3', '--rounds', '2',
      '--generator', 'openai:writer', '--generator-base-url', generator.baseUrl, '--generator-seed', '0',
      '--judge', 'openai:judge', '--judge-base-url', judge.baseUrl, '--no-cache', '--quiet',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const line = readLine(out);
    const { improvement } = line;
    expect(improvement.method).toBe('best-of-n+revise');
    expect(improvement.rounds.map((round) => round.kind)).toEqual(['sample', 'sample', 'sample', 'revision']);
    // Samples name 0, 1 and 2 keywords; the revision adds the third: everything met, so revising stops.
    expect(improvement.rounds.map((round) => round.score)).toEqual([0, 1 / 3, 2 / 3, 1]);
    expect(improvement.stopped).toMatch(/nothing left to fix/);
    expect(revisions).toEqual(['doctor']);
    expect(improvement).toMatchObject({ best_round: 3, start_score: 2 / 3, best_score: 1 });
    expect(line.score).toBe(1);
    expect(line.response).toContain('Also: doctor.');
    const summary = JSON.parse(readFileSync(metrics, 'utf8')) as { mean_gain: number; by_round: Array<{ round: number; mean_score: number }> };
    expect(summary.mean_gain).toBeCloseTo(1 / 3, 12);
    expect(summary.by_round.map((entry) => entry.mean_score)).toEqual([0, 1 / 3, 2 / 3, 1]);
  });

  test('an unreadable revision is an error for its round; the best response stays the start, not counted as improved', async ({ startJudge, tempDir }) => {
    const judge = await startJudge(judgeScript);
    const generator = await startJudge(() => ({ content: '   ' }));
    const out = join(tempDir, 'improved.jsonl');
    const result = await runCliCaptured([
      'improve', '--input', writeItems(tempDir), '--out', out, '--rounds', '2', '--generator', 'openai:writer', '--generator-base-url', generator.baseUrl,
      '--generator-attempts', '2', '--judge', 'openai:judge', '--judge-base-url', judge.baseUrl, '--no-cache',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const { improvement, response, score } = readLine(out);
    expect(generator.requests).toHaveLength(2);
    expect(improvement.rounds).toEqual([
      { round: 0, kind: 'given', status: 'ok', score: 1 / 3 },
      expect.objectContaining({ round: 1, kind: 'revision', status: 'error', score: null, error: expect.objectContaining({ message: expect.stringMatching(/empty response/) }) }),
    ]);
    expect(improvement).toMatchObject({ best_round: 0, start_score: 1 / 3, best_score: 1 / 3, stopped: 'the generator gave no usable revision' });
    expect(response).toBe('Give fluids.');
    expect(score).toBe(1 / 3);
    expect(result.stderr).toMatch(/0 improved, 1 round\(s\) in error/);
  });

  test('--dry-run sends nothing and prints the planned calls of both models', async ({ startJudge, tempDir }) => {
    const judge = await startJudge(judgeScript);
    const generator = await startJudge(() => ({ content: 'unused' }));
    const result = await runCliCaptured([
      'improve', '--input', writeItems(tempDir), '--out', join(tempDir, 'improved.jsonl'), '--best-of', '2', '--rounds', '1', '--dry-run',
      '--generator', 'openai:writer', '--generator-base-url', generator.baseUrl, '--judge', 'openai:judge', '--judge-base-url', judge.baseUrl, '--no-cache',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const estimate = JSON.parse(result.stdout) as { command: string; models: Record<string, { calls: number }> };
    expect(estimate.command).toBe('improve');
    expect(judge.requests.length + generator.requests.length).toBe(0);
  });
});
