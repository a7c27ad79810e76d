/**
 * One benchmark scenario per process (clean peak RSS and CPU figures): `node --import tsx
 * bench/scenarios.ts NAME` prints one JSON object on its last stdout line.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { defaultSampling } from '../src/pipeline/defaults.js';
import { createPerCriterionStrategy } from '../src/grading/strategies.js';
import { normalizeItem } from '../src/rubric/normalize.js';
import { healthbenchItems, loadLibrary, simulatedJudge, prepareCachedItems, runGradingScenario, syntheticItems, type GradingScenario } from './grading.js';
import { anthropicCachingScenario, anthropicTransportScenario } from './anthropic.js';
import { groupModes, healthbenchStep, runGroupModes } from './groups.js';
import { runHealthBenchLayout } from './reference-layout/index.js';
import { runPromptfoo } from './promptfoo/index.js';
import { parseBashTimes, peakRssBytes, startSimulatorProcess } from './support/index.js';
import { dataPath } from '../src/testing/data.js';

const healthbenchFile = dataPath('healthbench/oss_eval_first100.jsonl');
const haveHealthBench = existsSync(healthbenchFile);
/** Realistic per-token costs: prefill 20k tokens/s (cached 10× cheaper), decode 200 tokens/s. */
const realisticJudge = { fixedMs: 150, perInputTokenMs: 0.05, perCachedInputTokenMs: 0.005, perOutputTokenMs: 5 };

function skipped(name: string, reason: string) {
  return { scenario: name, skipped: reason };
}

const scenarios: Record<string, () => Promise<unknown>> = {
  'anthropic-caching': anthropicCachingScenario,
  'anthropic-transport': anthropicTransportScenario,
  async overhead() {
    const scenario: GradingScenario = {
      name: 'overhead',
      items: syntheticItems(300, 10),
      simulator: { fixedMs: 300 },
      grader: { calls: { concurrency: 64 } },
      ideal: () => (3000 * 0.3) / 64,
      note: '300 × 10 per-criterion, 300 ms judge, concurrency 64',
    };
    const { stats: _stats, ...row } = await runGradingScenario(scenario);
    return row;
  },

  /**
   * The grader's CPU per judge call, median of three cold processes each: at 3,000 calls
   * (as in `overhead`) and at 12,000 calls, whose difference gives the marginal cost per
   * call without the one-time warm-up (module compilation, JIT), next to a bare client.
   */
  async cpu() {
    const median = (values: number[]) => values.slice().sort((left, right) => left - right)[Math.floor(values.length / 2)];
    const runs = async (args: string[], env: Record<string, string> = {}) => {
      const values: Array<{ cpu_ms_per_call: number; calls: number }> = [];
      for (let run = 0; run < 3; run += 1) values.push((await runChild(args, env)) as { cpu_ms_per_call: number; calls: number });
      return median(values.map((value) => value.cpu_ms_per_call));
    };
    const bare = await runs(['bare-client']);
    const small = await runs(['overhead-fast']);
    const large = await runs(['overhead-fast'], { OVERHEAD_ITEMS: '1200' });
    const marginal = (large * 12000 - small * 3000) / 9000;
    return {
      scenario: 'cpu per call (5 ms judge, medians of 3)',
      bare_client_3000: bare,
      rubricate_3000: small,
      rubricate_12000: large,
      rubricate_marginal: marginal,
      warmup_cpu_s: ((small - marginal) * 3000) / 1000,
    };
  },

  /** The same workload with a 5 ms judge: the grader's own CPU becomes visible. */
  async 'overhead-fast'() {
    const { stats: _stats, ...row } = await runGradingScenario({
      name: 'overhead-fast',
      items: syntheticItems(Number(process.env.OVERHEAD_ITEMS ?? 300), 10),
      simulator: { fixedMs: 5 },
      grader: { calls: { concurrency: 64 } },
      note: 'same, 5 ms judge: CPU-bound',
    });
    return row;
  },

  /**
   * Reference point for the grader's CPU: a bare keep-alive node:http client sending the
   * same 3,000 requests (bodies built by rubricate's own strategy, then frozen) to the same
   * simulator and parsing the verdicts, with nothing else: no cache, retries or results.
   */
  async 'bare-client'() {
    const items = syntheticItems(300, 10).map((line) => normalizeItem(JSON.parse(line)));
    const strategy = createPerCriterionStrategy({ sampling: defaultSampling });
    const bodies = items.flatMap((item) => strategy.plan(item, item.rubric.criteria)).map((task) =>
      JSON.stringify({ model: 'simulated-judge', messages: task.request.messages, temperature: 0, max_tokens: 1024, response_format: { type: 'json_schema', json_schema: { name: task.request.output!.name, schema: task.request.output!.schema, strict: true } } }),
    );
    const fixedMs = Number(process.env.BARE_LATENCY_MS ?? 5);
    const simulator = await startSimulatorProcess({ fixedMs });
    try {
      const target = new URL(`${simulator.url}/chat/completions`);
      const agent = new http.Agent({ keepAlive: true });
      const send = (body: string) =>
        new Promise<void>((resolvePromise, reject) => {
          const outgoing = http.request({ hostname: target.hostname, port: target.port, path: target.pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (incoming) => {
            const chunks: Buffer[] = [];
            incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
            incoming.on('end', () => {
              const completion = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { choices: Array<{ message: { content: string } }> };
              JSON.parse(completion.choices[0].message.content);
              resolvePromise();
            });
          });
          outgoing.on('error', reject);
          outgoing.end(body);
        });
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      let next = 0;
      await Promise.all(Array.from({ length: 64 }, async () => {
        while (next < bodies.length) await send(bodies[next++]);
      }));
      const cpu = process.cpuUsage(cpuBefore);
      agent.destroy();
      return { scenario: 'bare node:http client', wall_s: (performance.now() - started) / 1000, ideal_s: null, overhead_ratio: null, calls: bodies.length, criteria: bodies.length, input_tokens_per_criterion: null, cached_input_share: null, output_tokens: null, peak_rss_mb: peakRssBytes() / 1e6, cpu_ms_per_call: (cpu.user + cpu.system) / 1000 / bodies.length, items_ok: null, items_error: null, note: `reference: same requests, bare keep-alive client, ${fixedMs} ms judge; user ${(cpu.user / 1000 / bodies.length).toFixed(3)} sys ${(cpu.system / 1000 / bodies.length).toFixed(3)}` };
    } finally {
      await simulator.stop();
    }
  },

  /** One RL step, 64 prompts × 8 responses, graded by group in each judging mode (docs/benchmarks.md). */
  async groups() {
    const rows = await runGroupModes(healthbenchStep(haveHealthBench ? healthbenchFile : undefined), realisticJudge, groupModes);
    return rows.map((row) => ({ ...row, note: haveHealthBench ? 'HealthBench prompts and rubrics' : 'synthetic items of HealthBench shape (HealthBench data not found)' }));
  },

  async healthbench() {
    if (!haveHealthBench) return [skipped('healthbench', `${healthbenchFile} not found`)];
    const items = healthbenchItems(healthbenchFile);
    const simulator = await startSimulatorProcess(realisticJudge);
    const rows: unknown[] = [];
    try {
      for (const [name, grader] of [
        ['healthbench per-criterion', {}],
        ['healthbench batched 4', { plan: { criteriaPerCall: 4 } }],
        ['healthbench batched all', { plan: { criteriaPerCall: 'all' } }],
        ['healthbench holistic', { plan: { mode: 'holistic' }, scoring: 'weighted_mean' }],
      ] as const) {
        const { stats: _stats, ...row } = await runGradingScenario({ name, items, simulator: realisticJudge, grader: { ...grader, calls: { concurrency: 16 } } }, simulator);
        rows.push(row);
      }
      await simulator.reset();
      const layoutItems = items.map((line) => {
        const item = JSON.parse(line) as { id: string; prompt: Array<{ role: string; content: string }>; response: string; rubric: { criteria: Array<{ text: string; points: number }> } };
        return { id: item.id, prompt: item.prompt, response: item.response, criteria: item.rubric.criteria };
      });
      const layout = await runHealthBenchLayout({ items: layoutItems, simulatorUrl: simulator.url, concurrency: 16 });
      const stats = await simulator.stats();
      const criteria = layoutItems.reduce((total, item) => total + item.criteria.length, 0);
      rows.push({
        scenario: 'HealthBench reference layout',
        wall_s: layout.wallMs / 1000,
        ideal_s: null,
        overhead_ratio: null,
        calls: layout.calls,
        criteria,
        input_tokens_per_criterion: layout.inputTokens / criteria,
        cached_input_share: stats.inputTokens > 0 ? stats.cachedInputTokens / stats.inputTokens : 0,
        output_tokens: layout.outputTokens,
        peak_rss_mb: null,
        cpu_ms_per_call: null,
        items_ok: layoutItems.length - layout.failures,
        items_error: layout.failures,
        note: 'simple-evals request shape, same simulator',
      });
    } finally {
      await simulator.stop();
    }
    return rows;
  },

  async ratelimited() {
    const { stats, ...row } = await runGradingScenario({
      name: 'ratelimited',
      items: syntheticItems(100, 10, 3),
      simulator: { fixedMs: 100, maxConcurrent: 8, overflow: 'reject', retryAfterSeconds: 1 },
      grader: { calls: { concurrency: 64, maxAttempts: 8 } },
      ideal: (simulatorStats) => (simulatorStats.completed * 0.1) / 8,
      note: 'capacity 8, 429 + Retry-After beyond it, concurrency 64',
    });
    return { ...row, peak_in_service: stats.peakInService };
  },

  /** rubricate vs promptfoo 0.121.20 (llm-rubric per criterion), same simulator, items and concurrency. */
  async promptfoo() {
    if (!haveHealthBench) return [skipped('promptfoo', `${healthbenchFile} not found`)];
    const items = healthbenchItems(healthbenchFile);
    const simulatorOptions = { fixedMs: 100 };
    const simulator = await startSimulatorProcess(simulatorOptions);
    const directory = mkdtempSync(join(tmpdir(), 'rubricate-bench-pf-'));
    try {
      const input = join(directory, 'items.jsonl');
      writeFileSync(input, `${items.join('\n')}\n`);
      // rubricate as a user runs it: the CLI in its own process, CPU of the whole process (startup included).
      const cli = await timedCli(['grade', '--input', input, '--judge', 'openai:simulated-judge', '--judge-base-url', simulator.url, '--cache', join(directory, 'cache.sqlite'), '--out', join(directory, 'results.jsonl'), '--concurrency', '16', '--quiet']);
      const ours = await simulator.stats();
      await simulator.reset();
      const promptfooItems = items.map((line) => {
        const item = JSON.parse(line) as { id: string; response: string; rubric: { criteria: Array<{ text: string }> } };
        return { id: item.id, response: item.response, criteria: item.rubric.criteria.map((criterion) => criterion.text) };
      });
      const theirs = await runPromptfoo({ items: promptfooItems, simulatorUrl: simulator.url, concurrency: 16, log: (line) => process.stderr.write(`${line}\n`) });
      if (theirs.skipped) return [skipped('promptfoo', theirs.skipped)];
      const row = (scenario: string, wallMs: number, cpuMs: number, calls: number, stats: { inputTokens: number; cachedInputTokens: number; outputTokens: number }, note: string) => ({
        scenario,
        wall_s: wallMs / 1000,
        ideal_s: null,
        overhead_ratio: null,
        calls,
        criteria: calls,
        input_tokens_per_criterion: stats.inputTokens / Math.max(1, calls),
        cached_input_share: stats.inputTokens > 0 ? stats.cachedInputTokens / stats.inputTokens : 0,
        output_tokens: stats.outputTokens,
        peak_rss_mb: null,
        cpu_ms_per_call: cpuMs / Math.max(1, calls),
        items_ok: null,
        items_error: null,
        note,
      });
      return [
        row('rubricate CLI (vs promptfoo)', cli.wallMs, cli.cpuMs, ours.completed, ours, 'whole CLI process, startup included; concurrency 16, 100 ms judge'),
        row('promptfoo 0.121.20 llm-rubric', theirs.wallMs, theirs.cpuMs, theirs.calls, { inputTokens: theirs.inputTokens ?? 0, cachedInputTokens: theirs.cachedInputTokens ?? 0, outputTokens: theirs.outputTokens ?? 0 }, `-j 16, startup included (version ${theirs.promptfooVersion}); ${theirs.mismatches.length} verdict mismatches`),
      ];
    } finally {
      await simulator.stop();
      rmSync(directory, { recursive: true, force: true });
    }
  },

  async scale() {
    const directory = mkdtempSync(join(tmpdir(), 'rubricate-bench-scale-'));
    try {
      const rows: unknown[] = [];
      for (const count of [10_000, 100_000]) {
        const prepared = prepareCachedItems(directory, count, 2);
        const result = await runChild(['scale-child', prepared.input, prepared.cache, join(directory, `results-${count}.jsonl`)]);
        rows.push({ scenario: `scale ${count / 1000}k cached`, ...(result as object) });
      }
      return rows;
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  },

  /** The scale curve: 10⁴, 10⁵, 10⁶ criteria against an instant in-process judge (SCALE_CRITERIA chooses the counts). */
  async 'scale-curve'() {
    const { runScaleCurve } = await import('./scale-curve.js');
    return runScaleCurve((args) => runChild(args));
  },

  /** serve's scale curve: the Python client drives 10⁴, 10⁵, 10⁶ uncached rewards (SERVE_SCALE_REWARDS chooses). */
  async 'serve-scale'() {
    const { runServeScale } = await import('./serve-scale.js');
    return runServeScale();
  },

  /** Start-up per command: CPU of `--version`, each main command's `--help` and a minimal real run (median of STARTUP_ROUNDS). */
  async startup() {
    const { runStartup } = await import('./startup.js');
    return runStartup();
  },

  /** Child of `scale-curve`: grades one input in this fresh process. */
  async 'scale-curve-child'() {
    const [input, cache, out, items] = process.argv.slice(3);
    const { scaleCurveChild } = await import('./scale-curve.js');
    return scaleCurveChild(input, cache, out, Number(items));
  },

  /** Deterministic checks throughput on the IFEval set (issue: ≥ 50,000 criteria/s without language detection). */
  async checks() {
    const { runChecksBenchmark } = await import('./checks.js');
    return (await runChecksBenchmark()) ?? skipped('checks', 'IFEval data not found');
  },

  /** The reply store's hot path on each SQLite driver this Node has (node:sqlite, better-sqlite3): µs per reply. */
  async 'sqlite-drivers'() {
    const { runSqliteDriversBenchmark } = await import('./sqlite-drivers.js');
    return runSqliteDriversBenchmark();
  },

  /** The embedded judge on the generated tiny GGUF model: criteria/s by sequences, overhead vs node-llama-cpp. */
  async llamacpp() {
    const { runLlamaCppBenchmark } = await import('./llamacpp.js');
    return runLlamaCppBenchmark();
  },

  /** The embedded judge at real size: Qwen3-shaped random-weight models, raw speed and each grading plan. */
  async 'local-judge'() {
    const { runLocalJudgeBenchmark } = await import('./local-judge.js');
    return runLocalJudgeBenchmark();
  },

  /** Reward service: cached throughput, judge-bound throughput, 10× overload. */
  async server() {
    const { runServerBenchmark } = await import('./server.js');
    return runServerBenchmark();
  },

  /** One serve process against a bare Hono server that parses the same body and answers a constant: cached rewards/s under wrk. */
  async 'serve-vs-hono'() {
    const { runServeVsHono } = await import('./serve-vs-hono.js');
    return runServeVsHono();
  },

  /** Distributed grading on Redis: 1 vs 3 worker processes, the fleet's global cap, a duplicated submission. */
  async fleet() {
    const { runFleetBenchmark } = await import('./fleet.js');
    return runFleetBenchmark();
  },

  /** serve replicas on one Redis: rewards/s on one replica vs three behind nginx and in the Python client's list; a replica killed mid-step. */
  async replicas() {
    const { runReplicaBenchmark } = await import('./replicas.js');
    return runReplicaBenchmark();
  },

  /** verl reward paths with a 300 ms judge: naive manager (sync, per sample) vs reward loop (async) vs batch manager. */
  async trainers() {
    const { runTrainerBenchmark } = await import('./trainers.js');
    return runTrainerBenchmark();
  },

  /** The 10,000-item report: size, first paint, filtering. */
  async report() {
    if (!existsSync('/usr/bin/chromium')) return skipped('report', '/usr/bin/chromium not installed (apt-get install chromium)');
    const { runReportBenchmark } = await import('./report.js');
    return runReportBenchmark();
  },

  /**
   * The otel-genai importer on one generated trace of 200,000 spans (spans written out of start
   * order), as one pretty-printed OTLP document and as one export per line: seconds and peak RSS
   * of a fresh process that reads it, and what it made of it.
   */
  async 'otel-import'() {
    const { writeOtelTrace } = await import('../src/testing/otel-trace.js');
    const directory = mkdtempSync(join(tmpdir(), 'rubricate-bench-otel-'));
    try {
      const rows: unknown[] = [];
      const spans = Number(process.env.OTEL_SPANS ?? 200_000);
      for (const layout of ['pretty', 'lines'] as const) {
        const file = join(directory, `trace-${layout}.json`);
        writeOtelTrace(file, { spans, layout, scrambled: true });
        const result = (await runChild(['otel-import-child', file])) as Record<string, unknown>;
        rows.push({ scenario: `otel-genai ${spans / 1000}k spans, ${layout === 'pretty' ? 'one pretty-printed document' : 'one export per line'}`, file_mb: statSync(file).size / 1e6, ...result });
        rmSync(file);
      }
      return rows;
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  },

  /** Child of `otel-import`: imports one file in this fresh process and reports its own peak RSS. */
  async 'otel-import-child'() {
    const [file] = process.argv.slice(3);
    const library = await loadLibrary();
    const rubrics = new Map([['r', library.normalizeRubric({ id: 'r', criteria: [{ id: 'c', text: 'Looks every record up.' }] })]]);
    const started = performance.now();
    let items = 0;
    let invalid = 0;
    let messages = 0;
    let characters = 0;
    for await (const record of library.getItemImporter('otel-genai').read(file, { rubrics })) {
      if (record.kind !== 'item') {
        invalid += 1;
        continue;
      }
      items += 1;
      messages += record.item.trajectory?.length ?? 0;
      characters += record.item.response.length;
    }
    return { items, invalid, messages, rendered_chars: characters, wall_s: (performance.now() - started) / 1000, peak_rss_mb: peakRssBytes() / 1e6 };
  },

  /** Child of `scale`: grades an all-cached input in this fresh process and reports its own peak RSS. */
  async 'scale-child'() {
    const [input, cache, out] = process.argv.slice(3);
    const library = await loadLibrary();
    const store = new library.SqliteReplyStore(cache);
    // Never contacted: every reply is in the store (a call would fail the run, which is the check).
    const judge = await simulatedJudge(library, 'http://127.0.0.1:9/v1');
    const grader = new library.Grader({ judge, store, scoring: 'weighted_mean', calls: { concurrency: 64, maxAttempts: 1 } });
    const started = performance.now();
    const outcome = await library.gradeFile({ grader, records: library.getItemImporter('items').read(input, {}), out });
    const wallMs = performance.now() - started;
    store.close();
    await judge.close?.();
    return {
      items: outcome.metrics.n,
      items_ok: outcome.metrics.n_ok,
      items_error: outcome.metrics.n_error,
      calls: outcome.usage.calls,
      cache_hits: outcome.usage.cache_hits,
      wall_s: wallMs / 1000,
      us_per_item: (wallMs * 1000) / outcome.metrics.n,
      peak_rss_mb: peakRssBytes() / 1e6,
    };
  },
};

/** Runs the CLI in a child process under bash's `times`, for whole-process CPU. */
async function timedCli(args: string[]): Promise<{ wallMs: number; cpuMs: number }> {
  const bin = resolve(process.cwd(), 'bin/rubricate.js');
  const quoted = [process.execPath, bin, ...args].map((part) => `'${part.replace(/'/g, `'\\''`)}'`).join(' ');
  const started = performance.now();
  // The CLI's stderr goes to a file of its own (bash's `times` writes to stdout), shown when the run fails.
  const errors = join(mkdtempSync(join(tmpdir(), 'rubricate-bench-cli-')), 'stderr.txt');
  const output = await new Promise<string>((resolvePromise, reject) => {
    const child = spawn('bash', ['-c', `${quoted} >/dev/null 2>'${errors}'; status=$?; times; exit $status`], {
      stdio: ['ignore', 'pipe', 'inherit'],
      // The built CLI, as an installed package runs it (run.ts builds it first).
      env: { ...process.env, RUBRICATE_USE_BUILD: '1' },
    });
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.on('close', (code) => (code === 0 || code === 3 ? resolvePromise(text) : reject(new Error(`rubricate exited ${code}: ${existsSync(errors) ? readFileSync(errors, 'utf8').slice(-2000) : ''}`))));
  });
  const wallMs = performance.now() - started;
  rmSync(join(errors, '..'), { recursive: true, force: true });
  const times = parseBashTimes(output);
  if (!times) throw new Error(`could not read CPU times from: ${output}`);
  return { wallMs, cpuMs: times.childrenUserMs + times.childrenSystemMs };
}

export function runChild(args: string[], env: Record<string, string> = {}): Promise<unknown> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', resolve(process.cwd(), 'bench/scenarios.ts'), ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.on('close', (code) => {
      const last = stdout.trim().split('\n').at(-1) ?? '';
      try {
        if (code !== 0) throw new Error(`exit ${code}`);
        resolvePromise(JSON.parse(last));
      } catch (error) {
        reject(new Error(`scenario ${args[0]} failed (${String(error)}): ${stdout.slice(-2000)}`));
      }
    });
  });
}

export const scenarioNames = Object.keys(scenarios).filter((name) => !name.endsWith('-child'));

const isMain = process.argv[1]?.endsWith('scenarios.ts');
if (isMain) {
  const name = process.argv[2];
  const run = name ? scenarios[name] : undefined;
  if (!run) {
    console.error(`unknown scenario ${name}; known: ${Object.keys(scenarios).join(', ')}`);
    process.exit(2);
  }
  const result = await run();
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}
