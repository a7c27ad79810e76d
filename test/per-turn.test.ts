/**
 * Per-turn grading end to end: the multi-turn example through `rubricate grade`, the library's
 * `grade` and the reward server, with each turn's verdict on the results line (what the report's
 * drawer shows) and the line read back byte for byte; and the MultiChallenge importer with its
 * scorings reproducing NeMo Gym's aggregation modes, computed by hand.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { grade } from '../src/index.js';
import { readResults } from '../src/results/results.js';
import { startTestServer } from '../src/server/test-support.js';
import { binaryVerdict, type FakeJudgeRequest, type FakeJudgeScript } from '../src/testing/fake-judge.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { projectRoot, runCliInProcess } from './helpers.js';

const conversations = join(projectRoot, 'examples/multiturn/conversations.jsonl');
const tasks = join(projectRoot, 'examples/multichallenge/tasks.jsonl');

/** The scripted judge's rule: each criterion's verdict from a word of the graded turn. */
const rules: Record<string, (turn: string) => boolean> = {
  'Addresses the user by name': (turn) => turn.includes('Alex'),
  'Acknowledges the peanut allergy': (turn) => turn.includes('peanut'),
  'Suggests a snack without peanuts': (turn) => turn.includes('apple'),
  'Recommends nothing with meat': (turn) => !turn.includes('meat'),
  'Recommendations are specific to Tokyo': (turn) => turn.includes('Tokyo'),
  'Did the model avoid suggesting peanuts or peanut-containing snacks?': (turn) => !turn.includes('peanut butter'),
  'Did the model address the user by their name (Alex)?': (turn) => turn.includes('Alex'),
  'Did the model recommend peanut butter?': (turn) => turn.includes('peanut butter'),
  'Did the model recommend fish or seafood dishes?': (turn) => turn.includes('sushi'),
  // The judge takes tempura for meat: the NO question fails.
  'Did the model recommend meat dishes?': (turn) => turn.includes('tempura'),
};

const script: FakeJudgeScript = (request: FakeJudgeRequest) => ({ content: binaryVerdict(rules[request.criteria[0].text](request.response ?? '')) });

interface Line {
  id: string;
  score: number;
  criteria: Array<{ id: string; met: boolean; value?: number; turns?: { aggregate: string; verdicts: Array<{ turn: number; met: boolean }> } }>;
}

/** What the two example items come to, by hand (weighted_mean; `min` over the turns of item 1, `mean` over those of item 2). */
function expectExampleResults(lines: readonly Line[]): void {
  const [alex, trip] = lines;
  // name: turn 1 "Noted: no peanuts for you." lacks the name, turn 2 has it; min → 0.
  expect(alex.criteria.find((criterion) => criterion.id === 'name')).toMatchObject({ met: false, turns: { aggregate: 'min', verdicts: [{ turn: 1, met: false }, { turn: 2, met: true }] } });
  expect(alex.criteria.find((criterion) => criterion.id === 'allergy')).toMatchObject({ met: true, turns: { verdicts: [{ turn: 1, met: true }] } });
  expect(alex.criteria.find((criterion) => criterion.id === 'snack')?.turns).toBeUndefined();
  expect(alex.score).toBe((0 * 1 + 1 * 1 + 1 * 2) / 4);
  expect(trip.criteria.find((criterion) => criterion.id === 'no-meat')?.turns?.verdicts.map((turn) => turn.met)).toEqual([true, true, true]);
  expect(trip.score).toBe(1);
}

describe('per-turn grading through the CLI, the library and serve', () => {
  test('rubricate grade writes each turn\'s verdict, and the line reads back byte for byte', async ({ startJudge, tempDir }) => {
    const fake = await startJudge(script);
    const out = join(tempDir, 'results.jsonl');
    const result = await runCliInProcess(['grade', '--input', conversations, '--out', out, '--judge', 'openai:fake', '--judge-base-url', fake.baseUrl, '--no-cache', '--quiet']);
    expect(result.code, result.stderr).toBe(0);
    // Item 1: name on its two turns, allergy on turn 1, snack; item 2: no-meat on its three turns, tokyo.
    expect(fake.requests).toHaveLength(2 + 1 + 1 + 3 + 1);
    const text = readFileSync(out, 'utf8');
    expectExampleResults(text.trim().split('\n').map((line) => JSON.parse(line) as Line));
    const written: string[] = [];
    for await (const read of readResults(out)) if (read.kind === 'result') written.push(JSON.stringify(read.record));
    expect(`${written.join('\n')}\n`).toBe(text);
    const rescored = await runCliInProcess(['score', '--input', out]);
    expect(JSON.parse(rescored.stdout).overall.score).toBe((0.75 + 1) / 2);
  });

  test('the library\'s grade and the reward server give the same per-turn verdicts', async ({ connectJudge, startJudge, closeAfter }) => {
    const fake = await startJudge(script);
    const items = readFileSync(conversations, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as unknown);
    const outcome = await grade(items, { judge: connectJudge(fake) });
    expectExampleResults(outcome.results as unknown as Line[]);
    const server = closeAfter(await startTestServer({ script }));
    const answers = await Promise.all(items.map(async (item) => (await server.post('/v1/score', item)).json() as Promise<{ reward: number; criteria: Line['criteria'] }>));
    expectExampleResults(answers.map((answer, index) => ({ id: String(index), score: answer.reward, criteria: answer.criteria })));
  });
});

describe('MultiChallenge', () => {
  test('both task layouts import, and every NeMo Gym aggregation mode scores as computed by hand', async ({ startJudge, tempDir }) => {
    const fake = await startJudge(script);
    const out = join(tempDir, 'results.jsonl');
    const result = await runCliInProcess(['grade', '--format', 'multichallenge', '--input', tasks, '--out', out, '--judge', 'openai:fake', '--judge-base-url', fake.baseUrl, '--no-cache', '--quiet']);
    expect(result.code, result.stderr).toBe(0);
    // The raw layout: its system prompt first, its thinking turn left out, its last assistant turn the response.
    const raw = fake.requests.find((request) => request.response === 'Try sushi at Tsukiji and tempura.')!;
    expect(raw.userText).toContain('system: You are a concise travel assistant.');
    expect(raw.userText).not.toContain('They are pescatarian now.');
    const lines = readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { id: string; score: number; scoring: string; tags: string[] });
    expect(lines.map((line) => [line.id, line.scoring, line.tags])).toEqual([
      ['example_1', 'multichallenge', ['topic:Food & Dietary', 'challenge:Memory Retention']],
      ['raw-2', 'multichallenge', ['topic:Travel', 'challenge:Preference Update']],
    ]);
    // Item 1 passes its three questions (the NO question by not being met); item 2 passes the fish question (weight 2) and fails the meat one (weight 1).
    const expected: Record<string, number> = { multichallenge: (1 + 0.5) / 2, 'multichallenge:min': (1 + 0) / 2, 'multichallenge:max': 1, 'multichallenge:all': (1 + 0) / 2, 'multichallenge:any': 1, 'multichallenge:weighted': (1 + 2 / 3) / 2 };
    for (const [scoring, score] of Object.entries(expected)) {
      const scored = await runCliInProcess(['score', '--input', out, '--scoring', scoring]);
      expect(scored.code, scored.stderr).toBe(0);
      expect(JSON.parse(scored.stdout).overall.score, scoring).toBeCloseTo(score, 12);
    }
  });
});
