/**
 * The run spec travels whole over the queue: a worker grades exactly as the producer's flags
 * say. The settings are enumerated from the schema, so a setting added there without reaching
 * the workers (or without a case here) fails this file.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { flagPaths, runFlagOf } from '../src/cli/run-spec-flags.js';
import { Grader } from '../src/pipeline/grader.js';
import { gradeThroughQueue, runGradingWorker } from '../src/queue/grading-queue.js';
import { normalizeItem } from '../src/rubric/normalize.js';
import { modelSpecSchema, parseRunSpec, runSpecSchema, settingAt, settingPaths, type RunSpec } from '../src/spec/run-spec.js';
import type { FakeJudge, FakeJudgeScript } from '../src/testing/fake-judge.js';
import { binaryVerdict, parseGradingPrompt } from '../src/testing/fake-judge.js';
import { redisTest } from '../src/testing/redis-fixture.js';
import { sampleSettings } from '../src/testing/run-spec-samples.js';
import { runCliInProcess } from './helpers.js';
import { hangGuard } from '../src/testing/hang-guard.js';

function assign(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let current = target;
  for (const key of keys.slice(0, -1)) current = (current[key] ??= {}) as Record<string, unknown>;
  current[keys[keys.length - 1]] = value;
}

/** Five items of three criteria; with `likert`, 1–5 criteria (what the Prometheus protocol grades). */
function writeItems(directory: string, likert = false): string {
  const file = join(directory, likert ? 'likert.jsonl' : 'items.jsonl');
  const scale = { type: 'ordinal', choices: ['1', '2', '3', '4', '5'].map((label) => ({ label, description: `level ${label}` })) };
  const lines = Array.from({ length: 5 }, (_, index) =>
    JSON.stringify({
      id: `item-${index}`,
      prompt: `Question ${index}?`,
      response: `Answer ${index}, with detail.`,
      rubric: { criteria: [{ id: 'a', text: `Answers question ${index}`, points: 2 }, { id: 'b', text: 'Is polite', points: 1 }, { id: 'c', text: 'Invents facts', points: -1 }].map((criterion) => (likert ? { ...criterion, points: 1, scale } : criterion)) },
    }),
  );
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** Five responses to two prompts (three, then two), each naming its prompt in `metadata.prompt_id`: what group judging grades. */
function writeGroupedItems(directory: string): string {
  const file = join(directory, 'grouped.jsonl');
  const lines = ['p1', 'p1', 'p1', 'p2', 'p2'].map((prompt, index) =>
    JSON.stringify({ id: `item-${index}`, prompt: `Question ${prompt}?`, response: `Answer ${index}, with detail.`, metadata: { prompt_id: prompt }, rubric: { criteria: [{ id: 'a', text: `Answers question ${prompt}`, points: 2 }, { id: 'b', text: 'Is polite', points: 1 }] } }),
  );
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** What a judge was sent between two request counts, in an order that does not depend on scheduling. */
function sentBodies(fake: FakeJudge, from: number, to: number): string[] {
  return fake.requests.slice(from, to).map((request) => JSON.stringify({ path: request.path, run: request.headers['x-run'], body: request.body })).sort();
}

/** The agentic case's judge: a search in the first tool turn, none after, then each criterion's verdict (read from the grading prompt, the first user message). */
const agenticScript: FakeJudgeScript = (request) => {
  const last = String(request.messages.at(-1)?.content ?? '');
  const made = request.messages.filter((message) => message.role === 'assistant').length;
  if (/Call a tool, or answer|No tool calls are left/.test(last)) return { content: { tool_call: made === 0 ? { name: 'search', arguments: '{"query": "answer"}' } : null } };
  const first = parseGradingPrompt(String(request.messages.find((message) => message.role === 'user')?.content ?? ''));
  return { content: { explanation: 'x', criteria_met: first.criteria[0].points > 0 } };
};

describe('the run spec over the queue', () => {
  redisTest('a worker receives every setting of the schema exactly as the producer sent it', async ({ redis, scriptedJudge }) => {
    const { judge } = await scriptedJudge(() => ({ content: binaryVerdict(true) }));
    const paths = [...settingPaths(modelSpecSchema), ...settingPaths(runSpecSchema).filter((path) => path !== 'judges' && path !== 'models')];
    const input: Record<string, unknown> = { judges: [{}] };
    for (const path of paths) {
      expect(sampleSettings, `a value for ${path}`).toHaveProperty([path]);
      assign(settingPaths(modelSpecSchema).includes(path) ? ((input.judges as Array<Record<string, unknown>>)[0]) : input, path, sampleSettings[path]);
    }
    const sent = parseRunSpec(input);
    const received: RunSpec[] = [];
    const stop = new AbortController();
    const worker = runGradingWorker({
      url: redis.url,
      signal: stop.signal,
      createGrader: async (spec) => {
        received.push(spec);
        return { grader: new Grader({ judge }), close: async () => {} };
      },
    });
    try {
      const item = normalizeItem({ id: 'one', prompt: 'p', response: 'r', rubric: { criteria: [{ text: 'c', points: 1 }] } });
      const records = (async function* () {
        yield { kind: 'item' as const, item, line: 1 };
      })();
      for await (const _result of gradeThroughQueue(records, { url: redis.url, spec: sent })) void _result;
    } finally {
      stop.abort();
      await worker;
    }
    expect(received).toEqual([sent]);
    for (const path of paths) {
      const where = settingPaths(modelSpecSchema).includes(path) ? received[0].judges[0] : received[0];
      expect(settingAt(where, path), path).toEqual(sampleSettings[path]);
    }
  });

  redisTest('a queued run with every grading flag sends the judge exactly the requests of the same run without --queue, and writes the same results', async ({ redis, startJudge, makeTempDir }) => {
    const directory = makeTempDir('rubricate-queue-spec-');
    const input = writeItems(directory);
    const alignmentFile = join(directory, 'alignment.json');
    writeFileSync(alignmentFile, JSON.stringify(sampleSettings['plan.alignment']));
    const calibrationFile = join(directory, 'calibration.json');
    writeFileSync(calibrationFile, JSON.stringify(sampleSettings['scoring.calibration']));
    const fake = await startJudge((request) => {
      const verdicts: Record<string, { explanation: string; criteria_met: boolean }> = {};
      for (const criterion of request.criteria) verdicts[criterion.id] = { explanation: 'x', criteria_met: criterion.points > 0 };
      return { content: { verdicts } };
    });
    const judge = ['--judge', 'openai:fake-judge', '--judge-base-url', fake.baseUrl];
    const documents = join(directory, 'sources.jsonl');
    writeFileSync(documents, `${JSON.stringify({ id: 'd1', text: 'An answer with detail.' })}\n`);
    const template = join(directory, 'template.txt');
    writeFileSync(template, String(sampleSettings['plan.template']));
    // What an OpenAI-compatible judge reads, and every run setting; the other families' settings travel in the same model spec (above).
    const model = ['--judge-header', 'x-run=7', '--judge-extra-body', '{"x":7}', '--max-reply-bytes', '100000', '--cache-namespace', 'ns-queue', '--judge-transport', 'http', '--structured-output', 'json_object', '--reasoning-effort', 'low', '--judge-profile', 'generic'];
    const calls = ['--max-attempts', '2', '--timeout', '30', '--max-retry-after', '5', '--concurrency', '3', '--breaker-threshold', '50'];
    const scoring = ['--scoring', 'normalized', '--failed-as-zero', '--check-mode', 'loose', '--cache-ttl', '3600', '--global-concurrency', '4', '--rate-limit', '60000,60000000', '--lease', '5'];
    const cases: Record<string, string[]> = {
      // --keep-requests writes the prompts --no-text leaves out: the two are in different cases.
      batched: ['--criteria-per-call', '2', '--explanation', 'none', '--temperature', '0.5', '--max-tokens', '300', '--seed', '7', '--context-budget', '6000', '--samples', '2', '--jury-aggregate', 'mean', '--keep-requests', '--max-repeats', '10', '--max-steps', '32', '--calibration', calibrationFile],
      holistic: ['--mode', 'holistic', '--likert-levels', '5', '--explanation', 'short', '--abstain', 'half', '--no-text'],
      // P(met) 0.91 is inside the band: every judged criterion escalates to the cascade's second judge.
      probability: ['--verdict', 'probability', '--top-logprobs', '5', '--judge-protocol', 'native', '--alignment', alignmentFile, '--cascade-judge', JSON.stringify({ model: 'openai:fake-strong', endpoint: { baseUrl: fake.baseUrl } }), '--escalate-band', '0.5,0.95', '--escalate-on', 'band,error'],
      prometheus: ['--judge-protocol', 'prometheus'],
      template: ['--judge-template', template, '--model-under-test', 'gpt-4o', '--self-preference', 'warn'],
      // Chunks of two would cut the three-response group: the producer keeps groups whole.
      listwise: ['--mode', 'listwise', '--listwise', 'holistic', '--likert-levels', '5', '--orders', '2', '--group-by', 'metadata.prompt_id', '--chunk-size', '2'],
      // The agentic judge: one search, then its verdict (the documents read by the worker as by the single run).
      agentic: ['--judge-tools', 'fetch,search,check,steps', '--judge-tool-budget', '3', '--fetch-allow', '127.0.0.1:9', '--fetch-max-bytes', '1000', '--fetch-timeout', '2', '--documents', documents],
      tournament: ['--mode', 'tournament', '--tournament', 'circular', '--group-by', 'metadata.prompt_id', '--chunk-size', '2', '--max-group-size', '64', '--max-tournament-pairs', '1000'],
    };
    // Every run-setting flag of the table is set by some case (a new flag without one fails here).
    const given = new Set([...model, ...calls, ...scoring, ...Object.values(cases).flat()].filter((argument) => argument.startsWith('--')));
    // The model under test's sampling is `eval`'s, which grades in its own process (no --queue): test/cli-eval.test.ts.
    for (const path of flagPaths.run.filter((setting) => !setting.startsWith('sampling.'))) expect(given.has(runFlagOf(path)), `a case setting ${runFlagOf(path)}`).toBe(true);
    for (const [index, [name, extra]] of Object.entries(cases).entries()) {
      // Each case on a database of its own: a worker's store is the queue's Redis.
      const queue = `${redis.url.replace(/\/$/, '')}/${index + 1}`;
      if (name === 'holistic') fake.setScript(() => ({ content: { explanation: 'x', choice: '4' } }));
      if (name === 'probability') {
        const tokens = ['{"criteria_met": ', 'true', '}'].map((token) => ({ token, logprob: -0.1, top_logprobs: token === 'true' ? [{ token: 'true', logprob: -0.1 }, { token: 'false', logprob: -2.4 }] : [{ token, logprob: -0.1 }] }));
        fake.setScript(() => ({ content: '{"criteria_met": true}', logprobs: { content: tokens } }));
      }
      if (name === 'prometheus') fake.setScript(() => ({ content: 'Feedback: fine. [RESULT] 4' }));
      if (name === 'template') fake.setScript((request) => ({ content: { explanation: 'x', criteria_met: request.criteria[0].points > 0 } }));
      if (name === 'listwise') fake.setScript((request) => ({ content: { responses: request.responses.map((response) => ({ label: response.label, verdicts: { holistic: { explanation: 'x', choice: String(1 + (response.text.length % 5)) } } })) } }));
      if (name === 'agentic') fake.setScript(agenticScript);
      if (name === 'tournament') fake.setScript((request) => ({ content: { explanation: 'x', winner: request.responses[0].text < request.responses[1].text ? '1' : '2' } }));
      const flags = [...judge, ...model, ...calls, ...scoring, ...extra];
      const before = fake.requests.length;
      // Fleet limits are shared through a Redis store: the single run's is a database of its own.
      const items = name === 'prometheus' ? writeItems(directory, true) : name === 'listwise' || name === 'tournament' ? writeGroupedItems(directory) : input;
      const single = await runCliInProcess(['grade', '--input', items, '--out', join(directory, `${name}-single.jsonl`), '--no-cache', '--store', `${queue}0`, '--quiet', ...flags]);
      const middle = fake.requests.length;
      expect(middle - before, `${name}: ${single.stderr}`).toBeGreaterThan(0);
      const worker = runCliInProcess(['worker', '--queue', queue, '--exit-when-idle', '--quiet', '--allow-endpoint', fake.baseUrl]);
      const queued = await runCliInProcess(['grade', '--input', items, '--out', join(directory, `${name}-queued.jsonl`), '--queue', queue, '--quiet', ...flags]);
      expect((await worker).code).toBe(0);
      expect(queued.code, `${name}: ${queued.stderr}`).toBe(single.code);
      expect(sentBodies(fake, middle, fake.requests.length), name).toEqual(sentBodies(fake, before, middle));
      // A kept call's latency is the one measurement of the clock in a results line: the rest is byte for byte.
      const withoutLatency = (text: string) => text.replace(/"latency_ms":\d+/g, '"latency_ms":0');
      const results = readFileSync(join(directory, `${name}-single.jsonl`), 'utf8');
      // Graded, not failed alike: every item has a verdict in both runs.
      expect(results.trim().split('\n').map((line) => (JSON.parse(line) as { status: string }).status), name).toEqual(Array(5).fill('ok'));
      if (name === 'batched') expect(results.match(/"latency_ms":\d+/g), 'every kept call has its latency').toHaveLength(results.match(/"attempts":/g)!.length);
      expect(withoutLatency(readFileSync(join(directory, `${name}-queued.jsonl`), 'utf8')), name).toBe(withoutLatency(results));
    }
  }, hangGuard(120_000));
});
