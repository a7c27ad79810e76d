/**
 * Grading scenarios measured against the judge simulator (a separate process, so the
 * grader's CPU and memory are its own). Each scenario grades through the same path as
 * `rubricate grade` (importer → Grader → results file) with a fresh reply cache.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { batchRecentReplies, SqliteReplyStore } from '../src/store/index.js';
import { createPerCriterionStrategy } from '../src/grading/strategies.js';
import { requestKey } from '../src/engine/request-key.js';
import { defaultSampling } from '../src/pipeline/defaults.js';
import type { GraderOptions } from '../src/pipeline/grader.js';
import { normalizeItem } from '../src/rubric/normalize.js';
import { seededRandom } from '../src/util/random.js';
import { peakRssBytes, threadCpuMs, type ThreadCpu } from './support/measure.js';
import { startSimulatorProcess, type SimulatorProcess } from './support/simulator-process.js';
import type { SimulatorOptions, SimulatorStats } from './simulator/types.js';
import { dataPath } from '../src/testing/data.js';

export interface GradingRow {
  scenario: string;
  wall_s: number;
  ideal_s: number | null;
  overhead_ratio: number | null;
  calls: number;
  criteria: number;
  input_tokens_per_criterion: number;
  cached_input_share: number;
  output_tokens: number;
  peak_rss_mb: number;
  cpu_ms_per_call: number;
  /** The same CPU split by thread (Linux): the JavaScript thread, and the others (V8's optimising compiler and GC helpers, libuv's pool). */
  cpu_main_ms_per_call?: number;
  cpu_other_threads_ms_per_call?: number;
  items_ok: number;
  items_error: number;
  rejected_429?: number;
  note?: string;
}

const words = 'the of and to in is that for it as with was on be by this are or from at which an have not they but all can more has one will if their about would there some so what when your also into only other time these could two may then do first any like new now such after most over well how where because should through each much before very must between under same while however both without those'.split(' ');

function sentence(random: () => number, length: number): string {
  const picked = Array.from({ length }, () => words[Math.floor(random() * words.length)]);
  picked[0] = picked[0][0].toUpperCase() + picked[0].slice(1);
  return `${picked.join(' ')}.`;
}

/** Deterministic items of realistic size: ~60-word prompt, ~300-word response, ~15-word criteria. */
export function syntheticItems(count: number, criteriaPerItem: number, seed = 1): string[] {
  const random = seededRandom(seed);
  const lines: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const prompt = Array.from({ length: 4 }, () => sentence(random, 15)).join(' ');
    const response = Array.from({ length: 6 }, () => Array.from({ length: 5 }, () => sentence(random, 10)).join(' ')).join('\n\n');
    const criteria = Array.from({ length: criteriaPerItem }, (_, criterion) => ({ id: `c${criterion}`, text: sentence(random, 15), points: criterion % 4 === 3 ? -3 : 5, tags: [`axis:a${criterion % 3}`] }));
    lines.push(JSON.stringify({ id: `item-${index}`, prompt, response, rubric: { criteria } }));
  }
  return lines;
}

/** The 100 HealthBench examples with responses: the ideal completion, or (for the 20 without one) another example's, so lengths stay realistic. */
export function healthbenchItems(file = dataPath('healthbench/oss_eval_first100.jsonl')): string[] {
  const rows = readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { prompt_id: string; prompt: unknown; rubrics: Array<{ criterion: string; points: number; tags: string[] }>; example_tags: string[]; ideal_completions_data: { ideal_completion: string } | null });
  const ideals = rows.map((row) => row.ideal_completions_data?.ideal_completion).filter((text): text is string => typeof text === 'string');
  return rows.map((row, index) =>
    JSON.stringify({
      id: row.prompt_id,
      prompt: row.prompt,
      response: row.ideal_completions_data?.ideal_completion ?? ideals[index % ideals.length],
      rubric: { criteria: row.rubrics.map((rubric) => ({ text: rubric.criterion, points: rubric.points, tags: rubric.tags })) },
      tags: row.example_tags,
    }),
  );
}

export interface GradingScenario {
  name: string;
  items: string[];
  simulator: SimulatorOptions;
  grader: Partial<GraderOptions>;
  /** Judge-bound ideal wall time in seconds, when it has a closed form. */
  ideal?: (stats: SimulatorStats) => number;
  note?: string;
}

type Library = typeof import('../src/index.js') & typeof import('../src/entries/store.js');

/**
 * The code under measurement: the build (what an installed package runs; `npm run bench`
 * builds it first), else the sources. RUBRICATE_BENCH_SOURCE=1 forces the sources. The
 * library's root entry and its store entry, as a user imports them.
 */
export async function loadLibrary(): Promise<Library> {
  const built = resolve(process.cwd(), 'dist/index.js');
  const builtStore = resolve(process.cwd(), 'dist/store.js');
  if (process.env.RUBRICATE_BENCH_SOURCE !== '1' && existsSync(built) && existsSync(builtStore)) {
    return { ...(await import(pathToFileURL(built).href)), ...(await import(pathToFileURL(builtStore).href)) } as Library;
  }
  return { ...(await import('../src/index.js')), ...(await import('../src/entries/store.js')) };
}

/** A judge for the simulator at baseUrl, built the way a library user builds one. */
export function simulatedJudge(library: Library, baseUrl: string): Promise<import('../src/judges/types.js').Judge> {
  return library.createJudge({ model: 'openai:simulated-judge', endpoint: { baseUrl } });
}

/** Where the CPU per call went: the JavaScript thread, and the others (V8's optimising compiler and GC helpers). */
function threadCpuPerCall(before: ThreadCpu | undefined, after: ThreadCpu | undefined, calls: number): Pick<GradingRow, 'cpu_main_ms_per_call' | 'cpu_other_threads_ms_per_call'> | undefined {
  if (!before || !after || calls === 0) return undefined;
  return { cpu_main_ms_per_call: (after.mainMs - before.mainMs) / calls, cpu_other_threads_ms_per_call: (after.otherMs - before.otherMs) / calls };
}

/** Grades a scenario against a fresh simulator process and returns its row. */
export async function runGradingScenario(scenario: GradingScenario, simulator?: SimulatorProcess): Promise<GradingRow & { stats: SimulatorStats }> {
  const directory = mkdtempSync(join(tmpdir(), `rubricate-bench-${scenario.name}-`));
  const input = join(directory, 'items.jsonl');
  writeFileSync(input, `${scenario.items.join('\n')}\n`);
  const ownSimulator = simulator ?? (await startSimulatorProcess(scenario.simulator));
  await ownSimulator.reset();
  const library = await loadLibrary();
  const judge = await simulatedJudge(library, ownSimulator.url);
  // Opened as `rubricate grade` opens it: a batch run reads each reply about once, so it keeps 2,000 in memory, not the library's 20,000.
  const store = new library.SqliteReplyStore(join(directory, 'cache.sqlite'), { recentReplies: batchRecentReplies });
  try {
    const grader = new library.Grader({ judge, store, scoring: 'healthbench', ...scenario.grader, calls: { concurrency: 64, timeoutMs: 120_000, ...scenario.grader?.calls } });
    const threadsBefore = threadCpuMs();
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const outcome = await library.gradeFile({ grader, records: library.getItemImporter('items').read(input, {}), out: join(directory, 'results.jsonl') });
    const wallMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    const threads = threadCpuPerCall(threadsBefore, threadCpuMs(), outcome.usage.calls);
    const stats = await ownSimulator.stats();
    const calls = stats.completed;
    const criteria = outcome.metrics.n_ok > 0 ? scenario.items.reduce((total, line) => total + (JSON.parse(line) as { rubric: { criteria: unknown[] } }).rubric.criteria.length, 0) : 0;
    const ideal = scenario.ideal ? scenario.ideal(stats) : null;
    return {
      scenario: scenario.name,
      wall_s: wallMs / 1000,
      ideal_s: ideal,
      overhead_ratio: ideal ? wallMs / 1000 / ideal : null,
      calls,
      criteria,
      input_tokens_per_criterion: criteria > 0 ? stats.inputTokens / criteria : 0,
      cached_input_share: stats.inputTokens > 0 ? stats.cachedInputTokens / stats.inputTokens : 0,
      output_tokens: stats.outputTokens,
      peak_rss_mb: peakRssBytes() / 1e6,
      cpu_ms_per_call: (cpu.user + cpu.system) / 1000 / Math.max(1, outcome.usage.calls),
      items_ok: outcome.metrics.n_ok,
      items_error: outcome.metrics.n_error,
      ...(stats.rejected ? { rejected_429: stats.rejected } : {}),
      ...(threads ?? {}),
      ...(scenario.note ? { note: scenario.note } : {}),
      stats,
    };
  } finally {
    await judge.close?.();
    store.close();
    if (!simulator) await ownSimulator.stop();
    rmSync(directory, { recursive: true, force: true });
  }
}

/**
 * Writes `count` items of `criteria` criteria each and fills a reply store with a verdict
 * for every criterion, keyed exactly as the engine keys them, so grading them is all cache hits.
 */
export function prepareCachedItems(directory: string, count: number, criteria: number): { input: string; cache: string } {
  const input = join(directory, `items-${count}.jsonl`);
  const cache = join(directory, `cache-${count}.sqlite`);
  const store = new SqliteReplyStore(cache);
  const strategy = createPerCriterionStrategy({ sampling: defaultSampling });
  const provenance = { id: 'openai:simulated-judge', model: 'simulated-judge' };
  const reply = { text: '{"explanation":"cached","criteria_met":true}', usage: { inputTokens: 500, outputTokens: 20, cachedInputTokens: 0 } };
  const lines = syntheticItems(count, criteria, 7);
  writeFileSync(input, `${lines.join('\n')}\n`);
  store.putMany(
    (function* () {
      for (const line of lines) {
        const item = normalizeItem(JSON.parse(line));
        for (const task of strategy.plan(item, item.rubric.criteria)) yield [requestKey(provenance, task.templateVersion, task.request, 0, task.keyMaterial), reply] as [string, typeof reply];
      }
    })(),
  );
  store.close();
  return { input, cache };
}
