/**
 * Anthropic-style prompt caching on HealthBench per-criterion grading, and the CPU per call
 * of the lean transport against the official SDK.
 *
 * `anthropic-caching`: grades HealthBench (../shared/data, else the synthetic set) per
 * criterion with an anthropic: judge against the loopback Messages API fake, whose prompt
 * cache follows Anthropic's rules (a breakpoint's prefix is cached once it reaches the
 * model's minimum, and is readable only after the call that wrote it was answered). Tokens
 * are counted with the o200k BPE as a stand-in for Claude's tokenizer. Input cost is in
 * units of the input price: uncached 1, cache reads 0.1, cache writes 1.25.
 *
 * `anthropic-transport`: CPU per call of `createAnthropicJudge` and of @anthropic-ai/sdk's
 * `messages.create` for the same requests, against the fake in its own process. The SDK is
 * not a project dependency: point ANTHROPIC_SDK_DIR at a folder where it is installed.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { createPerCriterionStrategy } from '../src/grading/strategies.js';
import { createAnthropicJudge } from '../src/judges/anthropic/anthropic-judge.js';
import type { Judge, JudgeRequest } from '../src/judges/types.js';
import { GradingEngine } from '../src/engine/engine.js';
import { normalizeItem } from '../src/rubric/normalize.js';
import type { Item } from '../src/rubric/schema.js';
import { startFakeAnthropic, type FakeAnthropic } from '../src/testing/fake-anthropic.js';
import { healthbenchItems, syntheticItems } from './grading.js';
import { countTextTokens } from './simulator/tokens.js';
import { dataPath } from '../src/testing/data.js';

const healthbenchFile = dataPath('healthbench/oss_eval_first100.jsonl');

function benchItems(): { items: Item[]; source: string } {
  const lines = existsSync(healthbenchFile) ? healthbenchItems(healthbenchFile) : syntheticItems(100, 11);
  return { items: lines.map((line, index) => normalizeItem(JSON.parse(line), { file: 'bench', line: index + 1 })), source: existsSync(healthbenchFile) ? 'HealthBench oss_eval first 100' : 'synthetic 100 × 11' };
}

interface CachingRun {
  calls: number;
  input: number;
  read: number;
  written: number;
}

async function gradeAll(items: Item[], judge: Judge, concurrency: number): Promise<void> {
  const engine = new GradingEngine({ judge, strategy: createPerCriterionStrategy({ sampling: { temperature: 0, maxTokens: 1024 } }), calls: { concurrency } });
  const running = new Set<Promise<void>>();
  for (const item of items) {
    const task = engine.gradeItem(item).then((graded) => {
      if (graded.status !== 'ok') throw new Error(`item ${item.id} failed: ${JSON.stringify(graded.criteria.find((criterion) => criterion.error)?.error)}`);
    });
    running.add(task);
    void task.finally(() => running.delete(task));
    // A few items in flight at once, like the grader's window.
    if (running.size >= 8) await Promise.race(running);
  }
  await Promise.all(running);
}

async function cachingRun(items: Item[], options: { model: string; minimumCacheTokens: number; caching: boolean; awaitCacheWrite: boolean }): Promise<CachingRun> {
  const fake: FakeAnthropic = await startFakeAnthropic(undefined, { countTokens: countTextTokens, minimumCacheTokens: options.minimumCacheTokens, serviceMs: 15 });
  const judge = createAnthropicJudge({ model: options.model, baseUrl: fake.baseUrl, apiKey: 'test-anthropic-key', promptCaching: options.caching, awaitCacheWrite: options.awaitCacheWrite });
  try {
    await gradeAll(items, judge, 16);
    return { calls: fake.totals.calls, input: fake.totals.inputTokens, read: fake.totals.cacheReadTokens, written: fake.totals.cacheWriteTokens };
  } finally {
    await judge.close();
    await fake.close();
  }
}

/** Input cost in units of the input price per token. */
function inputCost(run: CachingRun): number {
  return run.input - run.read - run.written + 0.1 * run.read + 1.25 * run.written;
}

export async function anthropicCachingScenario(): Promise<unknown> {
  const { items, source } = benchItems();
  const rows: Array<Record<string, unknown>> = [];
  for (const [model, minimum] of [
    ['claude-sonnet-4-5', 1024],
    ['claude-haiku-4-5', 4096],
  ] as const) {
    const without = await cachingRun(items, { model, minimumCacheTokens: minimum, caching: false, awaitCacheWrite: true });
    const cached = await cachingRun(items, { model, minimumCacheTokens: minimum, caching: true, awaitCacheWrite: true });
    const unordered = await cachingRun(items, { model, minimumCacheTokens: minimum, caching: true, awaitCacheWrite: false });
    rows.push({
      scenario: `anthropic caching ${model} (min ${minimum} tokens)`,
      source,
      calls: cached.calls,
      input_tokens: cached.input,
      input_cost_ratio: inputCost(cached) / inputCost(without),
      cached_input_share: cached.read / cached.input,
      cache_write_share: cached.written / cached.input,
      // The same run if every criterion of an item were sent at once (no wait for the first write).
      input_cost_ratio_without_waiting: inputCost(unordered) / inputCost(without),
      cached_input_share_without_waiting: unordered.read / unordered.input,
    });
  }
  return rows;
}

/** CPU ms per call of the lean judge and of the SDK, same requests, fake in its own process. */
export async function anthropicTransportScenario(): Promise<unknown> {
  const calls = Number(process.env.BENCH_CALLS ?? 3000);
  const concurrency = 16;
  const fakeProcess = spawn(process.execPath, ['--import', 'tsx', resolve(process.cwd(), 'bench/anthropic.ts'), 'fake'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const baseUrl = await new Promise<string>((resolvePromise, reject) => {
    let text = '';
    fakeProcess.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const match = /listening (\S+)/.exec(text);
      if (match) resolvePromise(match[1]);
    });
    fakeProcess.on('exit', (code) => reject(new Error(`fake exited ${code}`)));
  });
  const { items } = benchItems();
  const strategy = createPerCriterionStrategy({ sampling: { temperature: 0, maxTokens: 1024 } });
  const requests: JudgeRequest[] = [];
  for (let round = 0; requests.length < calls; round += 1) {
    for (const item of items) for (const task of strategy.plan(item, item.rubric.criteria)) if (requests.length < calls) requests.push(task.request);
  }
  // Build every prompt once up front, so both clients are measured on sending alone.
  for (const request of requests) void request.messages.length;
  const measure = async (send: (request: JudgeRequest) => Promise<unknown>) => {
    // Warm-up (JIT, connections), then the measured calls.
    await pool(requests.slice(0, 300), concurrency, send);
    const start = process.cpuUsage();
    const began = performance.now();
    await pool(requests, concurrency, send);
    const used = process.cpuUsage(start);
    return { cpuMsPerCall: (used.user + used.system) / 1000 / requests.length, wallS: (performance.now() - began) / 1000 };
  };
  const result: Record<string, unknown> = { scenario: 'anthropic transport CPU', calls: requests.length, concurrency };
  try {
    const judge = createAnthropicJudge({ model: 'claude-sonnet-4-5', baseUrl, apiKey: 'test-anthropic-key', promptCaching: false });
    const signal = new AbortController().signal;
    const lean = await measure((request) => judge.complete(request, { signal }));
    await judge.close();
    result.lean_cpu_ms_per_call = lean.cpuMsPerCall;
    const sdkDirectory = process.env.ANTHROPIC_SDK_DIR;
    if (sdkDirectory) {
      const load = createRequire(join(resolve(sdkDirectory), 'package.json'));
      const { default: Anthropic } = load('@anthropic-ai/sdk') as { default: new (options: Record<string, unknown>) => { messages: { create(body: unknown): Promise<unknown> } } };
      const client = new Anthropic({ apiKey: 'test-anthropic-key', authToken: null, baseURL: baseUrl, maxRetries: 0 });
      const sdk = await measure((request) =>
        client.messages.create({
          model: 'claude-sonnet-4-5',
          max_tokens: request.maxTokens,
          temperature: request.temperature,
          system: request.messages[0].content,
          messages: [{ role: 'user', content: request.messages[1].content }],
          tools: [{ name: request.output!.name, description: 'Record the verdict. Call this exactly once.', input_schema: request.output!.schema }],
          tool_choice: { type: 'tool', name: request.output!.name, disable_parallel_tool_use: true },
        }),
      );
      result.sdk_version = (JSON.parse(readFileSync(join(resolve(sdkDirectory), 'node_modules/@anthropic-ai/sdk/package.json'), 'utf8')) as { version: string }).version;
      result.sdk_cpu_ms_per_call = sdk.cpuMsPerCall;
      result.sdk_over_lean = sdk.cpuMsPerCall / lean.cpuMsPerCall;
    } else {
      result.sdk = 'not measured: set ANTHROPIC_SDK_DIR to a folder with @anthropic-ai/sdk installed';
    }
  } finally {
    fakeProcess.kill();
  }
  return result;
}

async function pool<T>(work: T[], concurrency: number, run: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < work.length) await run(work[next++]);
    }),
  );
}

// `node --import tsx bench/anthropic.ts fake`: the fake in its own process, for the transport scenario.
if (process.argv[1]?.endsWith('anthropic.ts') && process.argv[2] === 'fake') {
  const fake = await startFakeAnthropic();
  process.stdout.write(`listening ${fake.baseUrl}\n`);
}
