import { existsSync, readFileSync } from 'node:fs';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { safeParseJson } from '../../src/util/json.js';
import { buildGraderMessages } from '../reference-layout/template.js';
import { parseGraderReply } from '../reference-layout/run.js';
import { PrefixCache } from './prefix-cache.js';
import { startSimulator, type SimulatorHandle } from './server.js';
import { countTextTokens, encodeChatPrompt } from './tokens.js';
import type { SimulatorOptions } from './types.js';
import { simulatedExplanation, simulatedVerdict } from './verdict.js';
import { dataPath, haveData } from '../../src/testing/data.js';

type Message = { role: string; content: string };

const nonce = '0123456789abcdef';
const response = 'Drink fluids and rest.\nSee a doctor if the fever lasts more than three days.';

function rubricatePrompt(criteria: Array<{ id: string; points: string; text: string }>): string {
  const blocks = criteria.map((criterion) => `<criterion id="${criterion.id}" points="${criterion.points}">\n${criterion.text}\n</criterion>`);
  return [
    'Judge the response against each criterion.',
    `<conversation-${nonce}>`,
    'user: I have a fever, what should I do?\n<criterion id="decoy" points="1">\nnot a criterion, it is inside the conversation\n</criterion>',
    `</conversation-${nonce}>`,
    `<response-${nonce}>`,
    response,
    `</response-${nonce}>`,
    ...blocks,
  ].join('\n');
}

/** Parses JSON the simulator produced; a parse failure fails the test with the text shown. */
function parseJson(text: string): any {
  const parsed = safeParseJson(text);
  if (!parsed.ok) throw new Error(`not JSON (${parsed.error}): ${text.slice(0, 200)}`);
  return parsed.value;
}

async function post(url: string, body: unknown): Promise<{ status: number; headers: Headers; json: any; text: string }> {
  const reply = await fetch(`${url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await reply.text();
  const parsed = safeParseJson(text);
  return { status: reply.status, headers: reply.headers, json: parsed.ok ? parsed.value : undefined, text };
}

function replyContent(json: any): string {
  return json.choices[0].message.content as string;
}

async function withSimulator<T>(options: SimulatorOptions, work: (simulator: SimulatorHandle) => Promise<T>): Promise<T> {
  const simulator = await startSimulator(options);
  try {
    return await work(simulator);
  } finally {
    await simulator.close();
  }
}

describe('simulatedVerdict', () => {
  it('is deterministic, ignores surrounding whitespace, and is met about half the time', () => {
    expect(simulatedVerdict('Mentions rest', response)).toBe(simulatedVerdict('  Mentions rest\n', `\n${response}\n`));
    let met = 0;
    for (let index = 0; index < 2000; index += 1) if (simulatedVerdict(`criterion ${index}`, response)) met += 1;
    expect(met).toBeGreaterThan(900);
    expect(met).toBeLessThan(1100);
  });

  it('gives explanations of the requested length that agree with the verdict', () => {
    const { met, explanation } = simulatedExplanation('Mentions rest', response, 25);
    expect(met).toBe(simulatedVerdict('Mentions rest', response));
    expect(explanation.split(' ')).toHaveLength(25);
    expect(explanation.startsWith(met ? 'The response meets' : 'The response does not meet')).toBe(true);
    expect(simulatedExplanation('Mentions rest', response, 0).explanation).toBe('');
  });
});

describe('dialects', () => {
  let simulator: SimulatorHandle;
  beforeAll(async () => {
    simulator = await startSimulator({ fixedMs: 0 });
  });
  afterAll(async () => {
    await simulator.close();
  });

  it('rubricate: one criterion without response_format gets a single verdict', async () => {
    const text = 'Recommends rest\nand fluids';
    const reply = await post(simulator.url, { model: 'judge', messages: [{ role: 'user', content: rubricatePrompt([{ id: 'c1', points: '5', text }]) }] });
    expect(reply.status).toBe(200);
    const verdict = parseJson(replyContent(reply.json));
    expect(verdict).toEqual({ explanation: expect.any(String), criteria_met: simulatedVerdict(text, response) });
  });

  it('rubricate: criteria_verdicts batches verdicts by unescaped id, ignoring blocks inside the conversation', async () => {
    const criteria = [
      { id: 'a&quot;b', points: '3', text: 'Mentions fluids' },
      { id: 'x&lt;1&gt;&amp;', points: '-2', text: 'Prescribes antibiotics' },
      { id: 'plain', points: '1', text: 'Suggests seeing a doctor' },
    ];
    const reply = await post(simulator.url, {
      messages: [
        { role: 'system', content: 'You are a strict grader.' },
        { role: 'user', content: rubricatePrompt(criteria) },
      ],
      response_format: { type: 'json_schema', json_schema: { name: 'criteria_verdicts', schema: {} } },
    });
    const { verdicts } = parseJson(replyContent(reply.json));
    expect(Object.keys(verdicts).sort()).toEqual(['a"b', 'plain', 'x<1>&'].sort());
    expect(verdicts['a"b'].criteria_met).toBe(simulatedVerdict('Mentions fluids', response));
    expect(verdicts['x<1>&'].criteria_met).toBe(simulatedVerdict('Prescribes antibiotics', response));
    expect(verdicts.plain.criteria_met).toBe(simulatedVerdict('Suggests seeing a doctor', response));
    expect(reply.json.usage.completion_tokens).toBe(encode(replyContent(reply.json)).length);
  });

  it('rubricate: several blocks without response_format are batched; criterion_verdict forces a single object', async () => {
    const criteria = [
      { id: 'one', points: '1', text: 'Mentions fluids' },
      { id: 'two', points: '1', text: 'Mentions rest' },
    ];
    const batched = await post(simulator.url, { messages: [{ role: 'user', content: rubricatePrompt(criteria) }] });
    expect(Object.keys(parseJson(replyContent(batched.json)).verdicts)).toEqual(['one', 'two']);
    const single = await post(simulator.url, {
      messages: [{ role: 'user', content: rubricatePrompt(criteria.slice(0, 1)) }],
      response_format: { type: 'json_schema', json_schema: { name: 'criterion_verdict', schema: {} } },
    });
    expect(parseJson(replyContent(single.json)).criteria_met).toBe(simulatedVerdict('Mentions fluids', response));
  });

  it("promptfoo: grades the last <Output> against the <Rubric> and answers {reason, pass, score}", async () => {
    // Same layout as promptfoo's llm-rubric prompt: worked examples in the system message, then the graded output.
    const graded = 'It is <b>fine</b> to rest.\n\nThe {{ braces }} stay.';
    const rubric = 'Recommends rest';
    const messages: Message[] = [
      {
        role: 'system',
        content:
          'You are grading output according to a user-specified rubric. Answer as JSON.\n\n<Output>Sample output</Output>\n<Rubric>Sample rubric</Rubric>\n{"reason": "r", "pass": true, "score": 1.0}',
      },
      { role: 'user', content: `<Output>\n${graded}\n</Output>\n<Rubric>\n${rubric}\n</Rubric>` },
    ];
    const reply = await post(simulator.url, { model: 'gpt-4.1-mini', messages });
    const verdict = parseJson(replyContent(reply.json));
    const expected = simulatedVerdict(rubric, graded);
    expect(verdict).toEqual({ reason: expect.any(String), pass: expected, score: expected ? 1 : 0 });
  });

  it('healthbench-layout: reads the last assistant turn and the rubric item, answers in a json fence', async () => {
    const prompt = [
      { role: 'user', content: 'I have a fever.' },
      { role: 'assistant', content: 'How high is it?' },
      { role: 'user', content: '39 degrees.' },
    ];
    const messages = buildGraderMessages(prompt, response, 'Advises seeing a doctor if it persists', -3);
    const reply = await post(simulator.url, { model: 'gpt-4.1-2025-04-14', messages, temperature: 0.5, max_tokens: 2048 });
    const content = replyContent(reply.json);
    expect(content.startsWith('```json\n')).toBe(true);
    expect(parseGraderReply(content).criteria_met).toBe(simulatedVerdict('Advises seeing a doctor if it persists', response));
  });

  it('answers an unrecognised request with HTTP 400 and a message, and counts it', async () => {
    simulator.reset();
    const reply = await post(simulator.url, { messages: [{ role: 'user', content: 'Is this good?' }] });
    expect(reply.status).toBe(400);
    expect(reply.json.error.message).toMatch(/unrecognised grading request/);
    const broken = await fetch(`${simulator.url}/chat/completions`, { method: 'POST', body: '{not json' });
    expect(broken.status).toBe(400);
    expect(simulator.stats().invalid).toBe(2);
  });

  it('also serves the path without /v1 and streams when asked', async () => {
    const base = simulator.url.replace(/\/v1$/, '');
    const content = rubricatePrompt([{ id: 'c', points: '1', text: 'Mentions rest' }]);
    const plain = await post(base, { messages: [{ role: 'user', content }] });
    expect(plain.status).toBe(200);
    const streamed = await post(simulator.url, { messages: [{ role: 'user', content }], stream: true, stream_options: { include_usage: true } });
    const events = streamed.text
      .split('\n\n')
      .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
      .map((line) => parseJson(line.slice('data: '.length)));
    expect(events[0].choices[0].delta.content).toBe(replyContent(plain.json));
    expect(events.at(-1).usage.prompt_tokens).toBe(plain.json.usage.prompt_tokens);
    expect(streamed.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });
});

describe('latency and capacity', () => {
  const content = rubricatePrompt([{ id: 'c', points: '1', text: 'Mentions rest' }]);

  it('a fixed 50 ms shows up in the client-observed time and the recorded service time', async () => {
    await withSimulator({ fixedMs: 50 }, async (simulator) => {
      const started = performance.now();
      const reply = await post(simulator.url, { messages: [{ role: 'user', content }] });
      const elapsed = performance.now() - started;
      expect(reply.status).toBe(200);
      expect(elapsed).toBeGreaterThanOrEqual(49);
      const stats = simulator.stats();
      expect(stats.completed).toBe(1);
      expect(stats.serviceMs.max).toBeGreaterThanOrEqual(49);
    });
  });

  it('queues FIFO beyond maxConcurrent and records the queue time', async () => {
    await withSimulator({ fixedMs: 60, maxConcurrent: 1 }, async (simulator) => {
      const started = performance.now();
      const replies = await Promise.all([0, 1, 2].map(() => post(simulator.url, { messages: [{ role: 'user', content }] })));
      expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200]);
      expect(performance.now() - started).toBeGreaterThanOrEqual(3 * 60 - 3);
      const stats = simulator.stats({ records: true });
      expect(stats.peakInService).toBe(1);
      const timeline = (stats.records ?? []).slice().sort((left, right) => left.arrivedAtMs - right.arrivedAtMs);
      expect(timeline).toHaveLength(3);
      for (let index = 0; index < timeline.length; index += 1) {
        const record = timeline[index];
        expect(record.startedAtMs - record.arrivedAtMs).toBeCloseTo(record.queueMs, 2);
        if (index === 0) continue;
        // One slot, first come first served: each starts only once the one before it has finished (and
        // after it arrived). How soon after is a latency figure for `npm run bench`, not a test: on a
        // loaded machine the hand-off can take tens of milliseconds.
        const previousEnd = timeline[index - 1].startedAtMs + timeline[index - 1].serviceMs;
        expect(record.startedAtMs).toBeGreaterThanOrEqual(Math.max(previousEnd, record.arrivedAtMs) - 1);
      }
      // Three requests sent at once cannot all have been served without waiting.
      expect(Math.max(...timeline.map((record) => record.queueMs))).toBeGreaterThan(20);
    });
  });

  it("reject mode answers 429 with Retry-After and retry-after-ms when full", async () => {
    await withSimulator({ fixedMs: 400, maxConcurrent: 1, overflow: 'reject', retryAfterSeconds: 1.5 }, async (simulator) => {
      const first = post(simulator.url, { messages: [{ role: 'user', content }] });
      // Send the second only once the first holds the only slot.
      while (simulator.stats().peakInService < 1) await new Promise((resolve) => setTimeout(resolve, 2));
      const second = await post(simulator.url, { messages: [{ role: 'user', content }] });
      expect(second.status).toBe(429);
      expect(second.headers.get('retry-after')).toBe('2');
      expect(second.headers.get('retry-after-ms')).toBe('1500');
      expect(second.json.error.code).toBe('rate_limit_exceeded');
      expect((await first).status).toBe(200);
      const stats = simulator.stats();
      expect(stats.rejected).toBe(1);
      expect(stats.completed).toBe(1);
    });
  });

  it('service time follows fixed + per-token costs, with cached tokens at their own rate', async () => {
    const options = { fixedMs: 5, perInputTokenMs: 0.1, perCachedInputTokenMs: 0, perOutputTokenMs: 0.2 };
    await withSimulator(options, async (simulator) => {
      const long = rubricatePrompt([{ id: 'c', points: '1', text: 'Mentions rest' }]) + '\n' + 'Background notes on hydration. '.repeat(60);
      const first = await post(simulator.url, { messages: [{ role: 'user', content: long }] });
      const second = await post(simulator.url, { messages: [{ role: 'user', content: long }] });
      const [firstRecord, secondRecord] = simulator.stats({ records: true }).records ?? [];
      const expected = (usage: any) =>
        options.fixedMs +
        options.perInputTokenMs * (usage.prompt_tokens - usage.prompt_tokens_details.cached_tokens) +
        options.perOutputTokenMs * usage.completion_tokens;
      // The modelled time is exactly the formula's; the time slept is at least that (a timer fires no
      // earlier), and how much longer is the machine's load, not the model: a figure for the bench.
      expect(firstRecord.modelledMs).toBeCloseTo(expected(first.json.usage), 6);
      expect(secondRecord.modelledMs).toBeCloseTo(expected(second.json.usage), 6);
      expect(firstRecord.serviceMs).toBeGreaterThanOrEqual(expected(first.json.usage) - 2);
      expect(second.json.usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(0);
      expect(secondRecord.serviceMs).toBeGreaterThanOrEqual(expected(second.json.usage) - 2);
      expect(expected(second.json.usage)).toBeLessThan(expected(first.json.usage) - 30);
    });
  });
});

describe('prefix cache', () => {
  const sharedPrefix = 'You grade answers about fever care. '.repeat(40);

  it('counts a repeated prefix as cached in whole blocks, and a fresh prefix not at all', async () => {
    await withSimulator({ fixedMs: 0, prefixBlockTokens: 64 }, async (simulator) => {
      const ask = (system: string, criterion: string) =>
        post(simulator.url, {
          messages: [
            { role: 'system', content: system },
            { role: 'user', content: rubricatePrompt([{ id: 'c', points: '1', text: criterion }]) },
          ],
        });
      const first = await ask(sharedPrefix, 'Mentions rest');
      expect(first.json.usage.prompt_tokens_details.cached_tokens).toBe(0);
      const second = await ask(sharedPrefix, 'Mentions fluids');
      const cached = second.json.usage.prompt_tokens_details.cached_tokens;
      const systemTokens = encode(sharedPrefix).length + 2;
      expect(cached % 64).toBe(0);
      expect(cached).toBeGreaterThanOrEqual(Math.floor(systemTokens / 64) * 64);
      expect(cached).toBeLessThan(second.json.usage.prompt_tokens);
      const fresh = await ask(`Different opening. ${sharedPrefix}`, 'Mentions rest');
      expect(fresh.json.usage.prompt_tokens_details.cached_tokens).toBe(0);
      expect(simulator.stats().cachedInputTokens).toBe(cached);
      simulator.reset();
      const afterReset = await ask(sharedPrefix, 'Mentions fluids');
      expect(afterReset.json.usage.prompt_tokens_details.cached_tokens).toBe(0);
    });
  });

  it('matches whole blocks only, never caches the last token, and evicts least recently used blocks', () => {
    const cache = new PrefixCache(4, 3);
    const tokens = [1, 2, 3, 4, 5, 6, 7, 8, 9];
    expect(cache.lookupAndInsert(tokens)).toEqual({ cachedTokens: 0, blocks: 2 });
    expect(cache.lookupAndInsert(tokens).cachedTokens).toBe(8);
    // Same first block, different second: only the first block hits.
    expect(cache.lookupAndInsert([1, 2, 3, 4, 9, 9, 9, 9, 9]).cachedTokens).toBe(4);
    // Exactly 8 tokens: the last one is always computed, so only one block is cacheable.
    expect(cache.lookupAndInsert([1, 2, 3, 4, 5, 6, 7, 8]).blocks).toBe(1);
    // Capacity 3: two new blocks push out the least recently used ones.
    cache.lookupAndInsert([20, 21, 22, 23, 24, 25, 26, 27, 28]);
    expect(cache.size).toBe(3);
    expect(cache.lookupAndInsert([20, 21, 22, 23, 24, 25, 26, 27, 28]).cachedTokens).toBe(8);
  });
});

describe('token counts', () => {
  it('come from the o200k tokenizer: content tokens plus 3 per message plus 3 for the reply', async () => {
    await withSimulator({ fixedMs: 0 }, async (simulator) => {
      const messages = [
        { role: 'system', content: 'You are a careful grader. <|endoftext|> is just text here.' },
        { role: 'user', content: rubricatePrompt([{ id: 'c', points: '2', text: 'Mentions rest' }]) },
      ];
      const reply = await post(simulator.url, { messages });
      const plainText = { disallowedSpecial: new Set<string>() };
      const expected = messages.reduce((total, message) => total + encode(message.content, plainText).length + 3, 0) + 3;
      expect(reply.json.usage.prompt_tokens).toBe(expected);
      expect(reply.json.usage.completion_tokens).toBe(encode(replyContent(reply.json)).length);
      expect(reply.json.usage.total_tokens).toBe(expected + reply.json.usage.completion_tokens);
    });
  });

  it('chunked, memoised counting equals whole-text encoding on awkward texts', () => {
    const texts = [
      'a.\n/b\n\nc',
      'line one\n  indented\n\n\nthird\r\nfourth',
      'trailing newline\n',
      'blank line with a space\n \nafter\n\t\ttabbed',
      '\nleading newline',
      'ends with punctuation:\n\nNext',
      'numbers 12345\n678 and unicode\u00a0spaces\nnext\u2003line\nok',
      'emoji 👍🏽\nnext 日本語のテキスト\n- bullet\n* star',
    ];
    for (const text of texts) {
      expect(countTextTokens(text)).toBe(encode(text).length);
      expect(encodeChatPrompt([{ role: 'user', content: text }]).slice(2, -4)).toEqual(encode(text));
    }
  });

  const healthBenchFile = dataPath('healthbench/oss_eval_first100.jsonl');
  if (!existsSync(healthBenchFile)) console.warn(`skipping HealthBench token check: ${healthBenchFile} not found`);
  describe.skipIf(!haveData(healthBenchFile, 'bench/simulator/simulator.test.ts'))('on real HealthBench texts', () => {
    it('chunked counting equals whole-text encoding for every prompt turn and ideal completion', () => {
      const records = readFileSync(healthBenchFile, 'utf8').trim().split('\n').slice(0, 40).map((line) => parseJson(line));
      let checked = 0;
      for (const record of records) {
        const texts: string[] = record.prompt.map((turn: Message) => turn.content);
        if (record.ideal_completions_data?.ideal_completion) texts.push(record.ideal_completions_data.ideal_completion);
        for (const text of texts) {
          expect(countTextTokens(text)).toBe(encode(text, { disallowedSpecial: new Set() }).length);
          checked += 1;
        }
      }
      expect(checked).toBeGreaterThan(40);
    });
  });
});

describe('stats over HTTP', () => {
  it('GET /__stats reports totals per dialect and POST /__reset clears them', async () => {
    await withSimulator({ fixedMs: 0 }, async (simulator) => {
      const base = simulator.url.replace(/\/v1$/, '');
      await post(simulator.url, { messages: [{ role: 'user', content: rubricatePrompt([{ id: 'c', points: '1', text: 'Mentions rest' }]) }] });
      const stats: any = await (await fetch(`${base}/__stats`)).json();
      expect(stats.completed).toBe(1);
      expect(stats.byDialect.rubricate.requests).toBe(1);
      expect(stats.inputTokens).toBeGreaterThan(0);
      expect(stats.records).toBeUndefined();
      const withRecords: any = await (await fetch(`${base}/__stats?records=1`)).json();
      expect(withRecords.records).toHaveLength(1);
      expect(withRecords.records[0]).toMatchObject({ dialect: 'rubricate', status: 200, criteria: 1 });
      expect((await fetch(`${base}/__reset`, { method: 'POST' })).status).toBe(200);
      expect(await (await fetch(`${base}/__stats`)).json()).toMatchObject({ requests: 0 });
    });
  });

  it('rejects invalid options with CONFIG_INVALID', async () => {
    await expect(startSimulator({ fixedMs: -1 })).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    await expect(startSimulator({ overflow: 'drop' as 'queue' })).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
  });
});

describe('group judging through the simulator', () => {
  it('answers listwise requests per labelled response, and pairwise ones the same whichever response comes first', async () => {
    const { Grader } = await import('../../src/pipeline/grader.js');
    const { createJudge } = await import('../../src/judges/registry.js');
    const { normalizeItem } = await import('../../src/rubric/normalize.js');
    await withSimulator({ fixedMs: 0 }, async (simulator) => {
      const judge = (await createJudge({ model: 'openai:simulated-judge', endpoint: { baseUrl: simulator.url } }))!;
      try {
        const criteria = ['Advises fluids', 'Mentions a doctor', 'Gives a dose'];
        const responses = ['Drink fluids.', 'See a doctor.', 'Rest and fluids, then a doctor.', 'Take 500 mg.'];
        const items = responses.map((text, index) => normalizeItem({ id: `g/${index}`, prompt: 'I have a fever.', response: text, rubric: { criteria: criteria.map((criterion) => ({ text: criterion, points: 1 })) } }));
        const listwise = await new Grader({ judge, plan: { mode: 'listwise' } }).gradeGroup(items);
        for (const [index, result] of listwise.entries()) expect(result.criteria.map((criterion) => criterion.met), responses[index]).toEqual(criteria.map((criterion) => simulatedVerdict(criterion, responses[index])));
        const stats = await simulator.stats();
        expect(stats.completed).toBe(1);
        expect(stats.criteria).toBe(12);
        await simulator.reset();
        const tournament = await new Grader({ judge, plan: { mode: 'tournament' } }).gradeGroup(items);
        expect(tournament.every((result) => result.status === 'ok' && result.group?.position_consistency === 1)).toBe(true);
        expect((await simulator.stats()).completed).toBe(12);
        // A strict order of four: win rates 0, 1/3, 2/3, 1 in some order.
        expect(tournament.map((result) => result.score).sort()).toEqual([0, 1 / 3, 2 / 3, 1]);
      } finally {
        await judge.close?.();
      }
    });
  });
});
