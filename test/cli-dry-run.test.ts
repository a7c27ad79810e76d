import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type SimulatorHandle } from '../bench/simulator/index.js';
import { sharedData } from '../src/testing/shared-data.js';
import { runCli } from './helpers.js';

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
  const dry = await runCli([...args, '--dry-run']);
  expect(dry.code, dry.stderr).toBe(0);
  expect(simulator!.stats().requests).toBe(0);
  const estimate = JSON.parse(dry.stdout) as Estimate;
  const real = await runCli([...args, '--metrics', `${out}.metrics.json`]);
  expect(real.code, real.stderr).toBe(0);
  const actual = (JSON.parse(readFileSync(`${out}.metrics.json`, 'utf8')) as { usage: { calls: number; cost_usd: number; prompt_tokens: number; completion_tokens: number } }).usage;
  // A second dry run on the warm cache: every call is now a cache hit.
  const warm = JSON.parse((await runCli([...args, '--dry-run'])).stdout) as Estimate;
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
  }, 240_000);

  it.skipIf(!healthbench.available)('batched, 4 criteria per call: exact call count, cost within ±10%', async () => {
    const { estimate, actual } = await estimateThenRun('batched-4', ['--criteria-per-call', '4']);
    expect(estimate.judge_calls).toBe(actual.calls);
    expect(Math.abs(estimate.cost_usd.synchronous - actual.cost_usd) / actual.cost_usd).toBeLessThanOrEqual(0.1);
  }, 240_000);
});
