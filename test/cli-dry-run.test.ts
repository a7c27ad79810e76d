import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type SimulatorHandle } from '../bench/simulator/index.js';
import { sharedData } from '../src/testing/shared-data.js';
import { projectRoot, runCliInProcess } from './helpers.js';
import { createHash } from 'node:crypto';
import { sampleReplyFor, tokenizerFor } from '../src/batch/dry-run.js';
import { costOf, defaultPrices, emptyUsage, addUsage, type Usage } from '../src/engine/usage.js';
import { startFakeJudge } from '../src/testing/fake-judge.js';
import { hangGuard } from '../src/testing/hang-guard.js';

const healthbench = sharedData('healthbench/oss_eval_first100.jsonl');
let simulator: SimulatorHandle | undefined;
let directory: string;
let input: string[];

beforeAll(async () => {
  // No prefix cache in the simulator: its cost is then the synchronous price the estimate is compared with.
  simulator = await startSimulator({ fixedMs: 0, prefixCacheBlocks: 0 });
  directory = mkdtempSync(join(tmpdir(), 'rubricate-dry-run-'));
  if (!healthbench.available) return;
  const rows = readFileSync(healthbench.path, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { prompt_id: string });
  const responses = join(directory, 'responses.jsonl');
  writeFileSync(responses, rows.map((row, index) => JSON.stringify({ prompt_id: row.prompt_id, response: `Answer ${index}: rest, drink fluids, and see a doctor if the symptoms get worse or last more than three days.` })).join('\n'));
  input = ['--format', 'healthbench', '--input', healthbench.path, '--responses', responses];
});

afterAll(async () => {
  await simulator?.close();
  rmSync(directory, { recursive: true, force: true });
});

interface Estimate {
  judge_calls: number;
  cache_hits: number;
  input_tokens: number;
  expected_output_tokens: number;
  tokenizer: string;
  cost_usd: { synchronous: number; batch: number; prompt_cached: number };
}

async function estimateThenRun(name: string, extra: string[]): Promise<{ estimate: Estimate; actual: { calls: number; cost_usd: number; prompt_tokens: number; completion_tokens: number } }> {
  const cache = join(directory, `${name}.sqlite`);
  const out = join(directory, `${name}.jsonl`);
  const args = ['grade', ...input, '--judge', 'openai:gpt-4.1', '--judge-base-url', simulator!.url, '--judge-api-key', 'sk-sim', '--cache', cache, '--out', out, '--quiet', ...extra];
  const dry = await runCliInProcess([...args, '--dry-run']);
  expect(dry.code, dry.stderr).toBe(0);
  expect(simulator!.stats().requests).toBe(0);
  const estimate = JSON.parse(dry.stdout) as Estimate;
  const real = await runCliInProcess([...args, '--metrics', `${out}.metrics.json`]);
  expect(real.code, real.stderr).toBe(0);
  const actual = (JSON.parse(readFileSync(`${out}.metrics.json`, 'utf8')) as { usage: { calls: number; cost_usd: number; prompt_tokens: number; completion_tokens: number } }).usage;
  // A second dry run on the warm cache: every call is now a cache hit.
  const warm = JSON.parse((await runCliInProcess([...args, '--dry-run'])).stdout) as Estimate;
  expect(warm.judge_calls).toBe(0);
  expect(warm.cache_hits).toBe(estimate.judge_calls);
  simulator!.reset();
  console.log(`${name}: calls predicted ${estimate.judge_calls} actual ${actual.calls}; input tokens ${estimate.input_tokens} vs ${actual.prompt_tokens}; output ${estimate.expected_output_tokens} vs ${actual.completion_tokens}; cost $${estimate.cost_usd.synchronous} vs $${actual.cost_usd} (${(((estimate.cost_usd.synchronous - actual.cost_usd) / actual.cost_usd) * 100).toFixed(2)}%)`);
  return { estimate, actual };
}

describe('--dry-run against the judge simulator (HealthBench 100)', () => {
  it.skipIf(!healthbench.available)('per-criterion: exact call count, cost within ±10% of the recorded cost, nothing sent, cache untouched', async () => {
    const { estimate, actual } = await estimateThenRun('per-criterion', []);
    expect(estimate.tokenizer).toBe('o200k_base');
    expect(estimate.judge_calls).toBe(actual.calls);
    expect(Math.abs(estimate.cost_usd.synchronous - actual.cost_usd) / actual.cost_usd).toBeLessThanOrEqual(0.1);
    expect(estimate.cost_usd.batch).toBeCloseTo(estimate.cost_usd.synchronous / 2, 5);
  }, hangGuard(240_000));

  it.skipIf(!healthbench.available)('batched, 4 criteria per call: exact call count, cost within ±10%', async () => {
    const { estimate, actual } = await estimateThenRun('batched-4', ['--criteria-per-call', '4']);
    expect(estimate.judge_calls).toBe(actual.calls);
    expect(Math.abs(estimate.cost_usd.synchronous - actual.cost_usd) / actual.cost_usd).toBeLessThanOrEqual(0.1);
  }, hangGuard(240_000));

  it.skipIf(!healthbench.available)('pairwise (both orders): exact call count, cost within ±10%', async () => {
    const rows = readFileSync(healthbench.path, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { prompt_id: string; prompt: Array<{ role: string; content: string }> });
    const pairs = join(directory, 'pairs.jsonl');
    writeFileSync(pairs, rows.map((row, index) => JSON.stringify({ id: row.prompt_id, prompt: row.prompt, response_a: `Answer ${index}: rest and fluids.`, response_b: `Answer ${index}: see a doctor today, and rest meanwhile.` })).join('\n'));
    // A judge that reports usage as a server does: prompt tokens by o200k with chat framing, a reply of the schema with explanations of varying length.
    const tokenizer = tokenizerFor('gpt-4.1');
    const judge = await startFakeJudge((request) => {
      const schema = (request.body.response_format as { json_schema?: { schema?: Record<string, unknown> } } | undefined)?.json_schema?.schema;
      if (!schema) return { status: 400, body: { error: { message: 'expected a json_schema response_format' } } };
      const words = 10 + (createHash('sha256').update(request.userText).digest()[0] % 31);
      const content = JSON.stringify(sampleReplyFor(schema, Array.from({ length: words }, () => 'reason').join(' ')));
      const promptTokens = request.messages.reduce((total, message) => total + 3 + tokenizer.count(message.content), 3);
      return { content, usage: { prompt_tokens: promptTokens, completion_tokens: tokenizer.count(content) } };
    });
    try {
      const out = join(directory, 'pairs-out.jsonl');
      const args = ['compare', '--input', pairs, '--judge', 'openai:gpt-4.1', '--judge-base-url', judge.baseUrl, '--cache', join(directory, 'pairs.sqlite'), '--out', out, '--quiet'];
      const dry = await runCliInProcess([...args, '--dry-run']);
      expect(dry.code, dry.stderr).toBe(0);
      expect(judge.requests).toHaveLength(0);
      const estimate = JSON.parse(dry.stdout) as Estimate;
      const real = await runCliInProcess(args);
      expect(real.code, real.stderr).toBe(0);
      const usage = emptyUsage();
      for (const line of readFileSync(out, 'utf8').trim().split('\n')) addUsage(usage, (JSON.parse(line) as { usage: Usage }).usage);
      const actualCost = costOf(usage, defaultPrices['gpt-4.1'])!;
      console.log(`pairwise: calls predicted ${estimate.judge_calls} actual ${usage.calls}; input tokens ${estimate.input_tokens} vs ${usage.prompt_tokens}; output ${estimate.expected_output_tokens} vs ${usage.completion_tokens}; cost $${estimate.cost_usd.synchronous} vs $${actualCost} (${(((estimate.cost_usd.synchronous - actualCost) / actualCost) * 100).toFixed(2)}%)`);
      expect(estimate.judge_calls).toBe(200);
      expect(estimate.judge_calls).toBe(usage.calls);
      expect(Math.abs(estimate.cost_usd.synchronous - actualCost) / actualCost).toBeLessThanOrEqual(0.1);
    } finally {
      await judge.close();
    }
  }, hangGuard(240_000));
});

describe('--dry-run --no-cache', () => {
  it('grade and compare write nothing beside the output, not even the run journal, and send nothing', async () => {
    const judge = await startFakeJudge(() => ({ status: 500, body: { error: { message: 'a dry run must not call the judge' } } }));
    try {
      const runs = [
        ['grade', '--input', join(projectRoot, 'examples/items.jsonl')],
        ['compare', '--format', 'pairs', '--input', join(projectRoot, 'examples/pairs/pairs.jsonl')],
      ];
      for (const [index, run] of runs.entries()) {
        const out = join(directory, `no-cache-${index}.jsonl`);
        const dry = await runCliInProcess([...run, '--judge', 'openai:gpt-4.1', '--judge-base-url', judge.baseUrl, '--judge-api-key', 'sk-dry', '--no-cache', '--out', out, '--quiet', '--dry-run']);
        expect(dry.code, dry.stderr).toBe(0);
        expect((JSON.parse(dry.stdout) as Estimate).judge_calls).toBeGreaterThan(0);
        expect(readdirSync(directory).filter((name) => name.startsWith(`no-cache-${index}.jsonl`))).toEqual([]);
      }
      expect(judge.requests).toHaveLength(0);
    } finally {
      await judge.close();
    }
  });
});
