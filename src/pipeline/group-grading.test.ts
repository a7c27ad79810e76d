/**
 * Listwise and tournament judging through the Grader: calls per group, verdicts read per
 * response (a response the reply leaves out or repeats is an error, never a 0), identical
 * responses shown once, seeded masked orders, position consistency, splitting to the judge's
 * limits, the hard-rule gate, and tournaments folded into win rates.
 */
import { describe, expect } from 'vitest';
import { listwiseVerdicts, type FakeJudgeRequest } from '../testing/fake-judge.js';
import { test } from '../testing/vitest-fixtures.js';
import { normalizeItem } from '../rubric/normalize.js';
import type { ImportRecord } from '../rubric/records.js';
import type { Item } from '../rubric/schema.js';
import { createScriptedJudge } from '../judges/scripted.js';
import { tournamentPairCount, tournamentPairs } from '../grading/tournament.js';
import { Grader, type GraderOptions } from './grader.js';
import { consecutiveGroups, GroupGrading, groupSettingsOf } from './group-grading.js';

const words = ['apples', 'pears', 'plums', 'figs', 'dates', 'limes', 'kiwis', 'grapes', 'melons', 'cherries'];
const rubric = { criteria: words.map((word, index) => ({ id: `c${index}`, text: `mentions ${word}`, points: index === 9 ? -2 : 1 })) };

/** The judge's rule: a criterion is met when the response contains the criterion's last word. */
const met = (text: string, criterion: { text: string }) => text.includes(criterion.text.split(' ').at(-1)!);

/** weighted_mean by hand: Σ points of met criteria ÷ Σ positive points (9). */
function expectedScore(response: string): number {
  return rubric.criteria.reduce((total, criterion) => total + (met(response, criterion) ? criterion.points : 0), 0) / 9;
}

const responses = Array.from({ length: 8 }, (_, index) => `Response ${index}: ${words.filter((_, word) => (index + word) % 3 !== 0).join(', ')}.`);

function groupItems(texts: readonly string[] = responses, extra: Partial<Item> = {}): Item[] {
  return texts.map((response, index) => normalizeItem({ id: `q1/${index}`, prompt: 'Name some fruit.', response, rubric, ...extra }));
}

const ruleScript = (request: FakeJudgeRequest) => ({ content: listwiseVerdicts(request, (response, criterion) => met(response.text, criterion)) });

async function* asRecords(items: readonly Item[]): AsyncGenerator<ImportRecord> {
  let line = 0;
  for (const item of items) yield { kind: 'item', item, line: (line += 1) };
}

function grader(judge: GraderOptions['judge'], plan: GraderOptions['plan'] = { mode: 'listwise' }): Grader {
  return new Grader({ judge, plan, calls: { retryBaseDelayMs: 1, maxAttempts: 2 } });
}

describe('listwise judging', () => {
  test('grades 8 responses × 10 criteria in one call, and a reward for each response', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(ruleScript);
    const results = await grader(judge).gradeGroup(groupItems());
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0].responses).toHaveLength(8);
    expect(fake.requests[0].criteria).toHaveLength(10);
    expect(results.map((result) => result.id)).toEqual(responses.map((_, index) => `q1/${index}`));
    expect(results.map((result) => result.score)).toEqual(responses.map(expectedScore));
    expect(results.every((result) => result.status === 'ok' && result.criteria.length === 10)).toBe(true);
    // The group's one call is counted once, on its first line.
    expect(results.map((result) => result.usage?.calls)).toEqual([1, 0, 0, 0, 0, 0, 0, 0]);
    expect(results[3].group).toEqual({ id: expect.stringMatching(/^g_[0-9a-f]{16}$/), members: 8, index: 3 });
    // The same group per criterion: one call per response and criterion.
    fake.setScript((request) => ({ content: { explanation: 'x', criteria_met: met(request.response ?? '', request.criteria[0]) } }));
    const perCriterion = await grader(judge, {}).gradeGroup(groupItems());
    expect(fake.requests).toHaveLength(1 + 80);
    expect(perCriterion.map((result) => result.score)).toEqual(results.map((result) => result.score));
  });

  test('with a second order: two calls, the orders reversed, position consistency per response', async ({ scriptedJudge }) => {
    // A judge biased by position: whatever is shown first meets every criterion.
    const { fake, judge } = await scriptedJudge((request) => ({ content: listwiseVerdicts(request, (response, criterion) => response.label === 'A' || met(response.text, criterion)) }));
    const results = await grader(judge, { mode: 'listwise', orders: 2 }).gradeGroup(groupItems());
    expect(fake.requests).toHaveLength(2);
    const [first, second] = fake.requests.map((request) => request.responses.map((response) => response.text));
    expect(second).toEqual([...first].reverse());
    const firstShown = results.find((result) => result.id === `q1/${responses.indexOf(first[0])}`)!;
    const lastShown = results.find((result) => result.id === `q1/${responses.indexOf(first[7])}`)!;
    // Each was first once: its criteria not met by the rule disagree between the orders.
    const unmet = (text: string) => rubric.criteria.filter((criterion) => !met(text, criterion)).length;
    expect(firstShown.group?.position_consistency).toBeCloseTo(1 - unmet(first[0]) / 10, 12);
    expect(lastShown.group?.position_consistency).toBeCloseTo(1 - unmet(first[7]) / 10, 12);
    const middle = results.find((result) => result.id === `q1/${responses.indexOf(first[3])}`)!;
    expect(middle.group?.position_consistency).toBe(1);
    expect(middle.score).toBe(expectedScore(first[3]));
  });

  test('a reply that leaves out or repeats a response is an error for that response, never a 0; the others keep their rewards', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge((request) => {
      const reply = listwiseVerdicts(request, (response, criterion) => met(response.text, criterion));
      const omitted = reply.responses.filter((entry) => !request.responses.find((response) => response.label === entry.label)!.text.startsWith('Response 2'));
      const repeated = omitted.find((entry) => request.responses.find((response) => response.label === entry.label)!.text.startsWith('Response 5'));
      return { content: { responses: repeated ? [...omitted, repeated] : omitted } };
    });
    const results = await grader(judge).gradeGroup(groupItems());
    for (const index of [2, 5]) {
      expect(results[index].status).toBe('error');
      expect(results[index].score).toBeNull();
      expect(results[index].criteria.every((criterion) => criterion.status === 'error' && criterion.met === null)).toBe(true);
    }
    expect(results[2].error?.message).toMatch(/reply has no entry for response [A-H]/);
    expect(results[5].error?.message).toMatch(/reply gives response [A-H] 2 times/);
    for (const index of [0, 1, 3, 4, 6, 7]) expect(results[index].score).toBe(expectedScore(responses[index]));
    // The first call, then the two failed responses asked again (alone) before the error is final.
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1].responses.map((response) => response.text).sort()).toEqual([responses[2], responses[5]]);
    // One call asked again: one retry (not one per criterion asked again), with its reason.
    expect(results[0].usage).toMatchObject({ calls: 2, retries: 1, retry_reasons: { JUDGE_UNPARSEABLE: 1 } });
  });

  test('the scripted judge fits a listwise reply: every response once, no retry', async () => {
    const results = await grader(createScriptedJudge('mixed'), { mode: 'listwise', orders: 2 }).gradeGroup(groupItems());
    expect(results.every((result) => result.status === 'ok')).toBe(true);
    expect(results[0].usage).toMatchObject({ calls: 2, retries: 0 });
    expect(results[0].usage?.retry_reasons).toBeUndefined();
  });

  test('--keep-requests keeps the group\'s calls, on its first line with its usage', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge(ruleScript);
    const results = await new Grader({ judge, plan: { mode: 'listwise', orders: 2 }, keepRequests: true }).gradeGroup(groupItems());
    expect(results.map((result) => result.judge_calls?.length ?? 0)).toEqual([2, 0, 0, 0, 0, 0, 0, 0]);
    expect(results[0].judge_calls![0].messages.at(-1)?.content).toContain(responses[0]);
  });

  test('identical responses are shown once and share their verdicts; labels are masked and the order is a seeded shuffle', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(ruleScript);
    const texts = [responses[0], responses[1], responses[0], responses[2]];
    const results = await grader(judge).gradeGroup(groupItems(texts));
    expect(fake.requests[0].responses.map((response) => response.label)).toEqual(['A', 'B', 'C']);
    expect(fake.requests[0].userText).not.toContain('q1/');
    expect(results[2].criteria.map((criterion) => criterion.met)).toEqual(results[0].criteria.map((criterion) => criterion.met));
    // Same group, same order (same request bytes); another seed, another order.
    const again = await grader(judge).gradeGroup(groupItems());
    const reseeded = await grader(judge, { mode: 'listwise', sampling: { seed: 99 } }).gradeGroup(groupItems());
    expect(again.map((result) => result.score)).toEqual(responses.map(expectedScore));
    expect(reseeded.map((result) => result.score)).toEqual(responses.map(expectedScore));
    const shown = (index: number) => fake.requests[index].responses.map((response) => response.text);
    expect(shown(1)).not.toEqual(responses);
    await grader(judge).gradeGroup(groupItems());
    expect(shown(3)).toEqual(shown(1));
    expect(shown(2)).not.toEqual(shown(1));
  });

  test('a group larger than the judge’s output limit is split, criteria first, every call showing every response', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(ruleScript);
    // 8 responses × ~(24 + 300) tokens per verdict: about 2,600 tokens a criterion; 75% of 12,000 holds 3 criteria.
    const limited = { provenance: judge.provenance, capabilities: { ...judge.capabilities, limits: { maxOutputTokens: 12_000 } }, complete: judge.complete.bind(judge) };
    const results = await grader(limited).gradeGroup(groupItems());
    expect(fake.requests.length).toBe(4);
    expect(fake.requests.every((request) => request.responses.length === 8)).toBe(true);
    expect(fake.requests.map((request) => request.criteria.length)).toEqual([3, 3, 3, 1]);
    expect(fake.requests.every((request) => Number(request.body.max_tokens) <= 9000)).toBe(true);
    expect(results.map((result) => result.score)).toEqual(responses.map(expectedScore));
  });

  test('a hard-rule gate takes two listwise rounds: hard rules for all, the rest only for the responses it let through', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(ruleScript);
    const gated = { gate: 'hard_rules', criteria: [{ id: 'safe', text: 'mentions apples', points: 1, kind: 'hard_rule' }, { id: 'p', text: 'mentions pears', points: 1 }] };
    const items = ['apples and pears', 'only pears', 'apples'].map((response, index) => normalizeItem({ id: `g/${index}`, prompt: 'Fruit?', response, rubric: gated }));
    const results = await grader(judge).gradeGroup(items);
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1].responses.map((response) => response.text).sort()).toEqual(['apples', 'apples and pears']);
    expect(results.map((result) => [result.score, result.gated ?? false])).toEqual([
      [1, false],
      [0, true],
      [0.5, false],
    ]);
    expect(results[1].criteria[1]).toMatchObject({ status: 'skipped', skip_reason: 'gated' });
  });

  test('grade streams groups of consecutive items and writes one line per item in input order', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(ruleScript);
    const second = groupItems(responses.slice(0, 3), { prompt: [{ role: 'user', content: 'Other fruit?' }] }).map((item, index) => ({ ...item, id: `q2/${index}` }));
    const events: string[] = [];
    const stream = new Grader({ judge, plan: { mode: 'listwise' }, onEvent: (event) => event.type === 'item' && events.push(event.status) }).gradeStream(asRecords([...groupItems(), ...second]));
    const ids: string[] = [];
    for await (const result of stream) ids.push(result.id);
    expect(ids).toEqual([...responses.map((_, index) => `q1/${index}`), 'q2/0', 'q2/1', 'q2/2']);
    expect(fake.requests).toHaveLength(2);
    expect(events).toHaveLength(11);
  });

  test('settings the mode does not read are refused by name', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge(ruleScript);
    expect(() => grader(judge, { mode: 'batched', orders: 2 })).toThrow(/--orders applies to --mode listwise or --mode tournament/);
    expect(() => grader(judge, { mode: 'listwise', tournament: 'all' })).toThrow(/--tournament applies to --mode tournament/);
    expect(() => grader(judge, { mode: 'listwise', verdict: 'probability' })).toThrow(/--verdict does not apply to --mode listwise/);
    expect(() => grader(judge, { mode: 'tournament', explanation: 'short' })).toThrow(/--explanation does not apply to --mode tournament/);
    expect(() => grader(judge, { mode: 'listwise', likertLevels: 5 })).toThrow(/--likert-levels/);
    expect(() => grader(judge, { mode: 'listwise', abstain: 'skip' })).toThrow(/--abstain does not apply to --mode listwise/);
    expect(() => grader(judge, { mode: 'tournament', verdict: 'expected-score' })).toThrow(/--verdict does not apply to --mode tournament/);
    expect(() => grader(judge, { mode: 'listwise', protocol: 'selene' })).toThrow(/--judge-protocol does not apply to --mode listwise/);
    expect(() => new Grader({ judge, plan: { mode: 'listwise' }, cascade: { judges: [judge] } })).toThrow(/--cascade-judge .* --mode listwise/);
  });

  test('per-turn criteria are an error for the group, never a score; the guard refuses one author and keeps the rest of the group', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(ruleScript);
    const perTurn = await grader(judge).gradeGroup(groupItems(responses.slice(0, 2), { rubric: normalizeItem({ id: 'r', prompt: 'p', response: 'r', rubric: { criteria: [{ id: 'each', text: 'mentions figs', points: 1, turn: 'every' }] } }).rubric }));
    expect(perTurn.map((result) => [result.status, result.score])).toEqual([['error', null], ['error', null]]);
    expect(perTurn[0].criteria[0].error?.message).toMatch(/graded at one turn/);
    expect(fake.requests).toHaveLength(0);
    const authors = groupItems(responses.slice(0, 3)).map((item, index) => ({ ...item, metadata: { model: index === 1 ? judge.provenance.id.replace(/^[^:]+:/, '') : 'other-model' } }));
    const guarded = await new Grader({ judge, plan: { mode: 'listwise' }, guard: { selfPreference: 'refuse' } }).gradeGroup(authors);
    expect(guarded.map((result) => result.status)).toEqual(['ok', 'error', 'ok']);
    expect(guarded[1].criteria[0].error?.code).toBe('SELF_PREFERENCE_REFUSED');
    // The refused response never reaches the judge: the one call shows the other two.
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0].responses).toHaveLength(2);
  });
});

describe('tournament judging', () => {
  /** A judge preferring the response that meets more criteria of the rubric (ties when equal). */
  const preferMore = (request: FakeJudgeRequest) => {
    const count = (text: string) => words.filter((word) => text.includes(word)).length;
    const [first, second] = request.responses.map((response) => count(response.text));
    return { content: { explanation: 'compared', winner: first === second ? 'tie' : first > second ? '1' : '2' } };
  };
  const texts = ['apples', 'apples pears', 'apples pears plums', 'apples pears'];

  test('all pairs in both orders, folded into win rates and Bradley–Terry strengths', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(preferMore);
    const results = await grader(judge, { mode: 'tournament' }).gradeGroup(groupItems(texts));
    // Three distinct responses: 3 pairs × 2 orders.
    expect(fake.requests).toHaveLength(6);
    expect(fake.requests.every((request) => request.responses.length === 2)).toBe(true);
    // Wins: "apples" 0 of 2, "apples pears" 1 of 2, the three fruits 2 of 2.
    expect(results.map((result) => result.score)).toEqual([0, 0.5, 1, 0.5]);
    expect(results[1].criteria.map((criterion) => [criterion.id, criterion.label])).toEqual(expect.arrayContaining([
      ['vs-1', 'win'],
      ['vs-3', 'loss'],
    ]));
    // One response never lost: Bradley–Terry is undefined, reported as null, not a number.
    expect(results.map((result) => result.group?.bradley_terry)).toEqual([null, null, null, null]);
    expect(results.map((result) => result.group?.position_consistency)).toEqual([1, 1, 1, 1]);
  });

  test('a group of identical responses ties without a judge call; a lone response cannot be compared', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(preferMore);
    const tied = await grader(judge, { mode: 'tournament' }).gradeGroup(groupItems(['apples', 'apples', 'apples']));
    expect(tied.map((result) => result.score)).toEqual([0.5, 0.5, 0.5]);
    const alone = await grader(judge, { mode: 'tournament' }).gradeGroup(groupItems(['apples']));
    expect(alone[0]).toMatchObject({ status: 'error', score: null });
    expect(alone[0].error?.message).toMatch(/a single response/);
    expect(fake.requests).toHaveLength(0);
  });

  test('circular pairs make one comparison per response; a failed comparison fails both of its responses', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge((request) => (request.responses.some((response) => response.text === 'figs') ? { content: 'no verdict' } : preferMore(request)));
    const results = await grader(judge, { mode: 'tournament', tournament: 'circular', orders: 1 }).gradeGroup(groupItems(['apples', 'apples pears', 'figs', 'plums pears dates']));
    const comparisons = new Set(fake.requests.map((request) => request.responses.map((response) => response.text).sort().join('|')));
    expect(comparisons.size).toBe(4);
    const figs = results[2];
    expect(figs.status).toBe('error');
    expect(figs.score).toBeNull();
    expect(results.filter((result) => result.status === 'error')).toHaveLength(3);
  });
});

describe('bounds on groups and tournaments', () => {
  test('a tournament makes its pairs as they are compared, a window at a time, and counts them without making them', async ({ scriptedJudge }) => {
    // All pairs of 100,000 players are about 5·10⁹: taken one at a time, the first come at once.
    const pairs = tournamentPairs(Array.from({ length: 100_000 }, (_, index) => index), 'all');
    expect([pairs.next().value, pairs.next().value, pairs.next().value]).toEqual([[0, 1], [0, 2], [0, 3]]);
    expect(tournamentPairCount(100_000, 'all')).toBe(4_999_950_000);
    for (const players of [0, 1, 2, 3, 7]) {
      for (const pairing of ['all', 'circular'] as const) expect(tournamentPairCount(players, pairing), `${players} ${pairing}`).toBe([...tournamentPairs(Array.from({ length: players }, (_, index) => index), pairing)].length);
    }
    // Comparisons go to the judge through a window of 4: never more in flight, whatever the pairs.
    const { fake, judge } = await scriptedJudge(() => ({ content: { explanation: 'compared', winner: 'tie' } }));
    const pairwise = new Grader({ judge, plan: { mode: 'tournament' }, calls: { concurrency: 64, retryBaseDelayMs: 1, maxAttempts: 2 } });
    let inFlight = 0;
    let most = 0;
    const grading = new GroupGrading(groupSettingsOf({ mode: 'tournament' })!, {
      judge: async (item) => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        try {
          return await pairwise.gradeCriteria(item);
        } finally {
          inFlight -= 1;
        }
      },
      checks: () => Promise.reject(new Error('a tournament runs no checks')),
      comparisonWindow: 4,
    });
    const graded = await grading.gradeGroup(groupItems(Array.from({ length: 10 }, (_, index) => `answer ${index}`)));
    expect(fake.requests).toHaveLength(2 * 45);
    expect(graded.every((entry) => entry.status === 'ok' && entry.criteria.length === 9)).toBe(true);
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(4);
  });

  test('a group over --max-group-size, or a tournament over --max-tournament-pairs, is LIMIT_EXCEEDED for each item with no judge call', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ content: { explanation: 'compared', winner: 'tie' } }));
    const big = await new Grader({ judge, plan: { mode: 'listwise' }, limits: { maxGroupSize: 7 } }).gradeGroup(groupItems());
    expect(big.map((result) => [result.status, result.error?.code])).toEqual(responses.map(() => ['error', 'LIMIT_EXCEEDED']));
    expect(big[0].error?.message).toMatch(/the group has 8 responses, over the bound of 7 \(--max-group-size\)/);
    // Six distinct responses take 15 pairs, circular 6; identical responses are one player.
    const tournament = (limits: GraderOptions['limits'], extra: Partial<NonNullable<GraderOptions['plan']>> = {}) => new Grader({ judge, plan: { mode: 'tournament', orders: 1, ...extra }, limits });
    const six = groupItems(['a', 'b', 'c', 'd', 'e', 'f', 'a', 'b']);
    const over = await tournament({ maxTournamentPairs: 14 }).gradeGroup(six);
    expect(over.every((result) => result.error?.code === 'LIMIT_EXCEEDED')).toBe(true);
    expect(over[0].error?.message).toMatch(/a tournament of 6 responses \(--tournament all\) takes 15 comparisons, over the bound of 14 \(--max-tournament-pairs\)/);
    expect(fake.requests).toHaveLength(0);
    expect((await tournament({ maxTournamentPairs: 15 }).gradeGroup(six)).every((result) => result.status === 'ok')).toBe(true);
    expect(fake.requests).toHaveLength(15);
    expect((await tournament({ maxTournamentPairs: 6 }, { tournament: 'circular' }).gradeGroup(six)).every((result) => result.status === 'ok')).toBe(true);
    expect(() => new Grader({ judge, jury: { samples: 101 }, plan: { sampling: { temperature: 1 } } })).toThrow(/--samples 101 is over the bound of 100 \(--max-repeats\)/);
  });

  test('a stream never holds more of a group than the bound: a longer group comes in marked pieces, and its items are errors in their place', async ({ scriptedJudge }) => {
    const long = groupItems(Array.from({ length: 10 }, (_, index) => `long ${index}`));
    const short = groupItems(['x', 'y']).map((item) => ({ ...item, id: `q2/${item.id}`, prompt: [{ role: 'user' as const, content: 'Name a colour.' }] }));
    const pieces: Array<[number, boolean]> = [];
    for await (const piece of consecutiveGroups(asRecords([...long, ...short]), undefined, 4)) pieces.push([piece.records.length, piece.oversized]);
    expect(pieces).toEqual([[4, true], [4, true], [2, true], [2, false]]);

    const { fake, judge } = await scriptedJudge(ruleScript);
    const results = [];
    for await (const result of new Grader({ judge, plan: { mode: 'listwise' }, limits: { maxGroupSize: 4 } }).gradeStream(asRecords([...long, ...short]))) results.push(result);
    expect(results.map((result) => result.id)).toEqual([...long, ...short].map((item) => item.id));
    expect(results.slice(0, 10).every((result) => result.status === 'error' && result.error?.code === 'LIMIT_EXCEEDED')).toBe(true);
    expect(results[0].error?.message).toMatch(/the group has more than 4 responses, over the bound of 4 \(--max-group-size\)/);
    expect(results.slice(10).map((result) => result.status)).toEqual(['ok', 'ok']);
    // Only the short group reached the judge.
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0].responses).toHaveLength(2);
  });
});
