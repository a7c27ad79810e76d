import { describe, expect, vi } from 'vitest';
import { citationContext, citedUrls, type CarrHistoryMessage } from '../grading/carr-citations.js';
import type { FakeJudgeRequest, FakeJudgeScript } from '../testing/fake-judge.js';
import { test } from '../testing/vitest-fixtures.js';
import { CarrEvaluator, carrRequestSchema } from './carr.js';
import { startTestServer } from './test-support.js';

const question = 'Which event, refereed by a former judoka, took place in a capital city?';
const rubrics = ['<E0> took place in <E1>.', '<E1> is the capital of <E2>.', '<E3> refereed <E0>.', '<E4> wrote a book about <E5>.', '<E0> was held in 2019.', '<E6> sponsored <E0>.'];
const searchOutput = [
  '[1] Title: Fight Night 7 recap',
  '[1] URL Source: https://a.example/fight',
  '[1] Description: Fight Night 7 took place in Lisbon. Ana Reis refereed Fight Night 7.',
  '[1] Date: 2021-03-02',
  '[2] Title: Lisbon',
  '[2] URL Source: https://b.example/lisbon',
  '[2] Description: Lisbon is the capital of Portugal.',
].join('\n');
const call = (id: string, name: string, args: object) => ({ role: 'assistant', content: '', tool_calls: [{ tool_call_id: id, name, arguments: JSON.stringify(args) }] });
const output = (id: string, text: string) => ({ role: 'tool', content: [{ tool_call_id: id, output: text }] });
const answer =
  'The event is Fight Night 7 [[1](https://a.example/fight)], held in Lisbon [[2](https://b.example/lisbon)], the capital of Portugal. ' +
  'Its referee was Ana Reis [[3](https://r.jina.ai/https://a.example/fight)]. Rui Costa wrote about the Tagus [[4](view-source:https://c.example/books)].\n\n' +
  '## References\n[[5](https://d.example/uncited)]';
const history: CarrHistoryMessage[] = [
  { role: 'user', content: question },
  call('c1', 'browser.search', { query: 'fight night lisbon referee' }),
  output('c1', searchOutput),
  call('c2', 'browser.open', { url: 'https://c.example/books' }),
  output('c2', 'Title: Books\nURL Source: https://c.example/books\nPublished Time: 2020\nMarkdown Content:\nRui Costa wrote a book about Tagus.'),
  call('c3', 'browser.find', { pattern: 'Tagus' }),
  output('c3', 'Rui Costa wrote a book about Tagus (page 4)'),
  call('c4', 'browser.open', { url: 'https://d.example/uncited' }),
  output('c4', 'Title: Uncited\nURL Source: https://d.example/uncited\nMarkdown Content:\nFight Night 7 was held in 2019.'),
  { role: 'assistant', content: answer },
];
const expectedContext = [
  '[Webpage 1]\nURL Source: https://a.example/fight\nTitle: Fight Night 7 recap\nPublished Time: 2021-03-02\n\n',
  'Snippet:\nFight Night 7 took place in Lisbon. Ana Reis refereed Fight Night 7.\n\n',
  '[Webpage 2]\nURL Source: https://b.example/lisbon\nTitle: Lisbon\n\n',
  'Snippet:\nLisbon is the capital of Portugal.\n\n',
  '[Webpage 3]\nURL Source: https://c.example/books\nTitle: Books\nPublished Time: 2020\n\n',
  'Content:\nRui Costa wrote a book about Tagus.\n\n',
  'Search Result of Keyword "Tagus":\nRui Costa wrote a book about Tagus (page 4)\n\n',
].join('');

const identities: Record<string, string> = { E0: 'Fight Night 7', E1: 'Lisbon', E2: 'Portugal', E3: 'Ana Reis', E4: 'Rui Costa', E5: 'Tagus' };
const block = (tag: string, text: string) => new RegExp(`<${tag}-([0-9a-f]{16})>\\n([\\s\\S]*?)\\n</${tag}-\\1>`).exec(text)?.[2] ?? '';

/** A judge that answers by rule: correct when the response holds the reference; an entity is named when the response names it; a statement is supported when the pages hold it verbatim. */
function carrJudge(options: { named?: Record<string, string> } = {}): FakeJudgeScript {
  const named = options.named ?? identities;
  return (request: FakeJudgeRequest) => {
    const text = request.userText;
    if (text.includes('Reference answer:')) {
      const correct = (request.response ?? '').includes(block('reference', text));
      return { content: `extracted_final_answer: ${correct ? block('reference', text) : 'something else'}\nreasoning: compared\ncorrect: ${correct ? 'yes' : 'no'}` };
    }
    if (text.includes('Constraints:')) {
      const ids = [...new Set([...block('constraints', text).matchAll(/<(E\d+)>/g)].map((match) => match[1]))];
      const values = Object.fromEntries(ids.map((id) => [id, named[id] !== undefined && (request.response ?? '').includes(named[id]) ? named[id] : null]));
      return { content: `Analysis: by rule.\n\n\`\`\`json\n${JSON.stringify(values)}\n\`\`\`` };
    }
    const pages = block('webpages', text);
    const statements = block('statements', text).split('\n').map((line) => /^(S\d+)\. (.*)$/.exec(line)!);
    const marks = Object.fromEntries(statements.map(([, id, statement]) => [id, pages.includes(statement)]));
    return { content: `Support analysis by rule.\n\n\`\`\`json\n${JSON.stringify(marks)}\n\`\`\`` };
  };
}

const request = (overrides: { history?: unknown[]; ratio?: number; label?: string; rubrics?: string[]; unfinished?: boolean } = {}) =>
  carrRequestSchema.parse({
    history: overrides.history ?? history,
    label: overrides.label ?? 'Fight Night 7',
    task_unfinished: overrides.unfinished ?? false,
    remote_env_info: { search_forbidden_strs: [question], rubrics: overrides.rubrics ?? rubrics, rubric_reward_ratio: overrides.ratio ?? 0.3 },
  });

describe("CaRR's citation context", () => {
  test('cited URLs: deduplicated in order, prefixes dropped, a link followed by neither ] nor , is not a citation', () => {
    expect(citedUrls(answer)).toEqual(['https://a.example/fight', 'https://b.example/lisbon', 'https://c.example/books', 'https://d.example/uncited']);
    expect(citedUrls('see [1](https://x.example/a) and [2](https://x.example/b).')).toEqual([]);
  });

  test('the cited pages as the tool history showed them (the references section cut off first, as the server does)', () => {
    const cut = answer.slice(0, answer.lastIndexOf('## References')).trim();
    expect(citationContext(cut, history)).toBe(expectedContext);
  });

  test('search blocks run to the next title: brackets inside a description stay in it, the date is optional', () => {
    const search = '[1] Title: A\n[1] URL Source: https://a.example/x\n[1] Description: see [2] and [1] things\n[2] Title: B\n[2] URL Source: https://b.example/y\n[2] Description: text B\n[2] Date: 2020-01-01\n';
    const searched = [call('s', 'browser.search', { query: 'q' }), output('s', search)];
    expect(citationContext('[[1](https://a.example/x)], [[2](https://b.example/y)]', searched)).toBe(
      '[Webpage 1]\nURL Source: https://a.example/x\nTitle: A\n\nSnippet:\nsee [2] and [1] things\n\n' + '[Webpage 2]\nURL Source: https://b.example/y\nTitle: B\nPublished Time: 2020-01-01\n\nSnippet:\ntext B\n\n',
    );
    // Titles without the rest of a block are no page (and are read once each, never rescanned).
    const noise = [call('n', 'browser.search', { query: 'q' }), output('n', '[1] Title: x '.repeat(50_000))];
    expect(citationContext('[[1](https://a.example/x)]', noise)).toBe('');
  });

  test('no citation, or none the history shows, gives an empty context; at most 20 pages', () => {
    expect(citationContext('Fight Night 7.', history)).toBe('');
    expect(citationContext('Fight Night 7 [[1](https://nowhere.example/x)]', history)).toBe('');
    const many = Array.from({ length: 25 }, (_, index) => index);
    const search = many.map((index) => `[${index}] Title: Page ${index}\n[${index}] URL Source: https://p.example/${index}\n[${index}] Description: fact ${index}`).join('\n');
    const manyHistory = [call('s', 'browser.search', { query: 'q' }), output('s', search)];
    const context = citationContext(many.map((index) => `[[${index}](https://p.example/${index})]`).join(' '), manyHistory);
    expect(context.match(/^\[Webpage \d+\]$/gm)).toHaveLength(20);
    expect(context).toContain('fact 19');
    expect(context).not.toContain('fact 20');
  });
});

describe('CaRR through the engine (a judge that answers by rule)', () => {
  test('the hand-worked trajectory: outcome 1, 3 of 6 rubrics connected to E0, reward 0.7 + 0.3 × 0.5', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(carrJudge());
    const result = await new CarrEvaluator({ judge }).evaluate(request());
    expect(result.outcome_reward).toBe(1);
    expect(result.rubric_reward).toBe(0.5);
    expect(result.reward).toBeCloseTo(0.85, 12);
    const scores = Object.values(result.rubric_scores);
    expect(scores.map((score) => [score.all_entity_identified, score.is_supported, score.connected_to_answer, score.score])).toEqual([
      [true, true, true, 1],
      [true, true, true, 1],
      [true, true, true, 1],
      [true, true, false, 0], // supported, but linked to E0 by no entity
      [true, false, false, 0], // only the uncited page says so
      [false, false, false, 0], // E6 never named
    ]);
    expect(scores[5].filled_rubric).toBe('<E6> sponsored Fight Night 7.');
    // One call each: outcome, entities, support; the support call read exactly the citation context.
    expect(fake.requests).toHaveLength(3);
    expect(block('webpages', fake.requests[2].userText)).toBe(expectedContext);
    expect(block('statements', fake.requests[2].userText).split('\n')).toHaveLength(5);
  });

  test('a missing answer entity leaves every rubric disconnected; a wrong outcome keeps only the rubric term', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge(carrJudge({ named: { ...identities, E0: 'Some Other Event' } }));
    const result = await new CarrEvaluator({ judge }).evaluate(request({ label: 'Some Other Event' }));
    expect(result.outcome_reward).toBe(0);
    expect(result.rubric_reward).toBe(0);
    expect(result.reward).toBe(0);
    expect(Object.values(result.rubric_scores).map((score) => score.all_entity_identified)).toEqual([false, true, false, true, false, false]);
  });

  test('no citations: rubric reward 0 without a support call', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(carrJudge());
    const uncited = [...history.slice(0, -1), { role: 'assistant', content: 'The event is Fight Night 7, in Lisbon, capital of Portugal; referee Ana Reis; Rui Costa wrote about the Tagus.' }];
    const result = await new CarrEvaluator({ judge }).evaluate(request({ history: uncited }));
    expect(result).toMatchObject({ outcome_reward: 1, rubric_reward: 0 });
    expect(result.reward).toBeCloseTo(0.7, 12);
    expect(fake.requests).toHaveLength(2);
  });

  test('unfinished or answerless trajectories are 0 by the released rule, with no judge call', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(carrJudge());
    const evaluator = new CarrEvaluator({ judge });
    expect(await evaluator.evaluate(request({ unfinished: true }))).toEqual({ reward: 0, outcome_reward: 0, rubric_reward: 0, rubric_scores: {} });
    expect((await evaluator.evaluate(request({ history: history.slice(0, -1) }))).reward).toBe(0);
    expect(fake.requests).toHaveLength(0);
  });

  test('an entity reply that never has the asked shape is an error after the retries, never a 0', async ({ scriptedJudge }) => {
    const rule = carrJudge();
    const { fake, judge } = await scriptedJudge((judgeRequest) => (judgeRequest.userText.includes('Constraints:') ? { content: '```json\n{"E0": "none"}\n```' } : rule(judgeRequest)));
    const error = await new CarrEvaluator({ judge, calls: { maxAttempts: 2 } }).evaluate(request()).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'JUDGE_UNPARSEABLE' });
    expect(fake.requests.filter((judgeRequest) => judgeRequest.userText.includes('Constraints:'))).toHaveLength(2);
  });
});

describe('POST /carr/evaluate and /carr/evaluate/group', () => {
  const body = (overrides: { label?: string; ratio?: number; content?: string } = {}) => ({
    history: overrides.content === undefined ? history : [...history.slice(0, -1), { role: 'assistant', content: overrides.content }],
    label: overrides.label ?? 'Fight Night 7',
    task_unfinished: false,
    remote_env_info: { search_forbidden_strs: [question], rubrics, rubric_reward_ratio: overrides.ratio ?? 0.3 },
  });

  test("answers the released server's fields for its request body", async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ script: carrJudge() }));
    const response = await server.post('/carr/evaluate', body());
    expect(response.status).toBe(200);
    const answer = await response.json();
    expect(Object.keys(answer).sort()).toEqual(['outcome_reward', 'reward', 'rubric_reward', 'rubric_scores']);
    expect(answer.reward).toBeCloseTo(0.85, 12);
    expect(answer.rubric_scores['2']).toMatchObject({ raw_rubric: '<E3> refereed <E0>.', filled_rubric: 'Ana Reis refereed Fight Night 7.', entity_values: { E3: 'Ana Reis', E0: 'Fight Night 7' }, connected_to_answer: true, score: 1 });
  });

  test('a group: each answer, and C-GRPO rewards from their outcome and rubric rewards', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ script: carrJudge() }));
    // Second response: wrong answer (outcome 0), same evidence (rubric 0.5). Third: no citations (rubric 0).
    const requests = [body(), body({ label: 'Another Event' }), body({ content: 'Fight Night 7, in Lisbon.' })];
    const response = await server.post('/carr/evaluate/group', { requests, group: { ratio: 0.3, normalize: 'group-max', only: 'all' } });
    expect(response.status).toBe(200);
    const answer = await response.json();
    expect(answer.results.map((result: { outcome_reward: number; rubric_reward: number }) => [result.outcome_reward, result.rubric_reward])).toEqual([
      [1, 0.5],
      [0, 0.5],
      [1, 0],
    ]);
    // Group max 0.5: normalised rubric rewards 1, 1, 0.
    [1, 0.3, 0.7].forEach((expected, index) => expect(answer.rewards[index]).toBeCloseTo(expected, 12));
  });

  test('a bad body is a 400 naming the field', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ script: carrJudge() }));
    const response = await server.post('/carr/evaluate', { ...body(), remote_env_info: { rubrics } });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ code: 'INPUT_INVALID' });
  });

  test('through the admission queue like the other trainer routes: held for room, then counted in /metrics', async ({ closeAfter }) => {
    // The judge answers only once released: the queue stays full until the test says so.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const rule = carrJudge();
    const server = closeAfter(await startTestServer({ script: async (request) => (await released, rule(request)), service: { maxQueue: 1 } }));
    const first = server.post('/carr/evaluate', body());
    await vi.waitFor(() => expect(server.service.admission.used).toBe(1));
    // A second trajectory waits in line for the one place instead of being graded beside the first.
    const second = server.post('/carr/evaluate', body({ label: 'Another Event' }));
    await vi.waitFor(() => expect(server.service.admission.waiting).toBe(1));
    // A group larger than the queue is admitted a trajectory at a time, never refused.
    const group = server.post('/carr/evaluate/group', { requests: [body(), body()], group: { ratio: 0.3, normalize: 'none', only: 'all' } });
    await vi.waitFor(() => expect(server.service.admission.waiting).toBe(3));
    release();
    const answers = await Promise.all([first, second, group]);
    expect(answers.map((response) => response.status)).toEqual([200, 200, 200]);
    expect((await answers[1].json()).outcome_reward).toBe(0);
    expect(server.service.admission.used).toBe(0);
    const metrics = server.service.metrics;
    expect(metrics.rewards.value({ outcome: 'ok' })).toBe(4);
    expect(metrics.requests.value({ route: '/carr/evaluate', status: '200' })).toBe(2);
    expect(metrics.requests.value({ route: '/carr/evaluate/group', status: '200' })).toBe(1);
    // Every judge call of the three stages is counted, fresh or from the reply cache.
    expect(metrics.judgeCalls.value() + metrics.cacheHits.value()).toBeGreaterThanOrEqual(server.fake.requests.length);
    expect(metrics.judgeCalls.value()).toBeGreaterThan(0);
    const text = await (await server.app.request('/metrics')).text();
    expect(text).toContain('rubricate_http_requests_total{route="/carr/evaluate",status="200"} 2');
  });

  test('a judge failure is an error counted as one, never a reward', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ script: () => ({ status: 500 }) }));
    const response = await server.post('/carr/evaluate', body());
    expect(response.status).toBeGreaterThanOrEqual(500);
    expect(await response.json()).not.toHaveProperty('reward');
    expect(server.service.metrics.rewards.value({ outcome: 'error' })).toBe(1);
    expect(server.service.metrics.rewards.value({ outcome: 'ok' })).toBe(0);
    expect(server.service.metrics.judgeErrors.value({ code: 'JUDGE_SERVER_ERROR' }) + server.service.metrics.judgeRetries.value()).toBeGreaterThan(0);
    expect(server.service.admission.used).toBe(0);
  });
});
