/**
 * The scale curve (issue #49): 10⁴, 10⁵ and 10⁶ criteria graded per criterion with a judge that
 * answers at once, each count in a fresh process (its own peak RSS and CPU), so what grows with
 * the input shows as CPU per call or peak RSS growing. Two ways, chosen by SCALE_MODES:
 * `cli` runs the built `rubricate grade --judge scripted:mixed` as a user runs it (no loader
 * thread; CPU and peak RSS of the whole process, start-up included); `library` grades through
 * `gradeFile` in a bench child with an in-process judge and also reports the live heap.
 */
import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { loadavg, tmpdir } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { join } from 'node:path';
import { loadLibrary, syntheticItems } from './grading.js';
import { exitReportArgs, peakRssBytes, readExitReport } from './support/measure.js';
import { projectRoot } from './support/simulator-process.js';
import { batchRecentReplies } from '../src/store/memory.js';
import type { Judge, JudgeReply, JudgeRequest } from '../src/judges/types.js';

const criteriaPerItem = 10;

/** Writes items of ten criteria each, a thousand at a time, so the parent never holds the input. */
async function writeItems(file: string, criteria: number): Promise<void> {
  const stream = createWriteStream(file);
  const items = Math.ceil(criteria / criteriaPerItem);
  for (let offset = 0; offset < items; offset += 1000) {
    const chunk = syntheticItems(Math.min(1000, items - offset), criteriaPerItem, 1 + offset / 1000);
    const text = chunk.map((line, index) => line.replace(/^\{"id":"item-\d+"/, `{"id":"item-${offset + index}"`)).join('\n');
    if (!stream.write(`${text}\n`)) await once(stream, 'drain');
  }
  stream.end();
  await once(stream, 'finish');
}

/** A judge that answers every per-criterion request at once: met when the criterion's id ends in an even digit. */
function instantJudge(): Judge {
  return {
    provenance: { id: 'scale:instant', model: 'instant' },
    capabilities: { images: false, tokenProbabilities: false },
    complete(request: JudgeRequest): Promise<JudgeReply> {
      const criterion = request.subject?.criteria[0] ?? '';
      const met = Number(criterion.at(-1)) % 2 === 0;
      return Promise.resolve({ text: `{"explanation":"Made up by the scale benchmark's instant judge.","criteria_met":${met}}`, usage: { inputTokens: 500, outputTokens: 20, cachedInputTokens: 0 } });
    },
  };
}

/**
 * Live heap, as opposed to peak RSS (which also counts the garbage V8 lets pile up before a
 * collection): at every tenth of the input a full collection, then the heap still in use.
 * What the run held per item would show here growing with the input.
 */
function liveHeapProbe(items: number): { records: <T>(source: AsyncIterable<T>) => AsyncIterable<T>; maxMb: () => number; cpuMicros: () => number } {
  setFlagsFromString('--expose-gc');
  const collect = runInNewContext('gc') as () => void;
  let max = 0;
  // The forced collections' CPU is the probe's, not the grader's: it is left out of CPU per call.
  let probeCpuMicros = 0;
  const step = Math.max(1, Math.floor(items / 10));
  return {
    async *records<T>(source: AsyncIterable<T>): AsyncIterable<T> {
      let seen = 0;
      for await (const record of source) {
        yield record;
        seen += 1;
        if (seen % step === 0) {
          const before = process.cpuUsage();
          collect();
          max = Math.max(max, process.memoryUsage().heapUsed);
          const spent = process.cpuUsage(before);
          probeCpuMicros += spent.user + spent.system;
        }
      }
    },
    maxMb: () => max / 1e6,
    cpuMicros: () => probeCpuMicros,
  };
}

/** Child: grades one input file with a reply cache, reports its CPU per call, wall, peak RSS and output size. */
export async function scaleCurveChild(input: string, cache: string, out: string, items: number): Promise<Record<string, unknown>> {
  const library = await loadLibrary();
  const probe = liveHeapProbe(items);
  // The store as `rubricate grade` opens it: a small recent-reply memory (a batch run reads each reply about once).
  const store = new library.SqliteReplyStore(cache, { recentReplies: batchRecentReplies });
  const grader = new library.Grader({ judge: instantJudge(), store, scoring: 'healthbench', calls: { concurrency: 64 } });
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const outcome = await library.gradeFile({ grader, records: probe.records(library.getItemImporter('items').read(input, {})), out });
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  store.close();
  const calls = outcome.usage.calls;
  return {
    items: outcome.metrics.n,
    items_error: outcome.metrics.n_error,
    calls,
    wall_s: wallMs / 1000,
    cpu_ms_per_call: (cpu.user + cpu.system - probe.cpuMicros()) / 1000 / Math.max(1, calls),
    peak_rss_mb: peakRssBytes() / 1e6,
    live_heap_mb: probe.maxMb(),
    output_mb: statSync(out).size / 1e6,
  };
}

/** Counts the results file's items, and those not `ok` (the CLI's figures, read back from what it wrote). */
async function countResults(file: string): Promise<{ items: number; items_error: number }> {
  let items = 0;
  let errors = 0;
  let rest = '';
  for await (const chunk of createReadStream(file, { encoding: 'utf8' })) {
    const lines = (rest + String(chunk)).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      if (line === '') continue;
      items += 1;
      if ((JSON.parse(line) as { status?: string }).status !== 'ok') errors += 1;
    }
  }
  return { items, items_error: errors };
}

/** One `rubricate grade` process (the build, as installed) over the input with the scripted judge: its CPU, wall and peak RSS. */
async function gradeWithCli(directory: string, input: string, criteria: number): Promise<Record<string, unknown>> {
  const report = join(directory, 'exit-report.json');
  const out = join(directory, 'results.jsonl');
  const args = [...exitReportArgs(report), join(projectRoot, 'bin', 'rubricate.js'), 'grade', '--input', input, '--judge', 'scripted:mixed', '--cache', join(directory, 'cache.sqlite'), '--out', out, '--concurrency', '64', '--quiet', '--run-index', 'off'];
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd: directory, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NODE_OPTIONS: '', RUBRICATE_USE_BUILD: '1' } });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-2000)));
  const [code] = (await once(child, 'exit')) as [number | null];
  const wallMs = performance.now() - started;
  if (code !== 0) throw new Error(`rubricate grade exited ${String(code)}: ${stderr}`);
  const measured = readExitReport(report);
  return {
    ...(await countResults(out)),
    calls: criteria,
    wall_s: wallMs / 1000,
    cpu_ms_per_call: measured.cpuMs / criteria,
    peak_rss_mb: measured.peakRssBytes / 1e6,
    output_mb: statSync(out).size / 1e6,
  };
}

/** The 1-minute load average, rounded: written beside every figure (the machine may be shared). */
function load(): number {
  return Math.round(loadavg()[0] * 10) / 10;
}

/**
 * Parent: per count and mode, one fresh process, its input and cache in a temporary folder.
 * SCALE_CRITERIA=10000,100000 chooses the counts; SCALE_MODES=cli,library the ways (default cli).
 */
export async function runScaleCurve(runChild: (args: string[]) => Promise<unknown>): Promise<unknown[]> {
  const counts = (process.env.SCALE_CRITERIA ?? '10000,100000,1000000').split(',').map(Number);
  const modes = (process.env.SCALE_MODES ?? 'cli').split(',');
  const rows: unknown[] = [];
  for (const criteria of counts) {
    const directory = mkdtempSync(join(tmpdir(), 'rubricate-bench-curve-'));
    try {
      const input = join(directory, 'items.jsonl');
      await writeItems(input, criteria);
      for (const mode of modes) {
        const loadBefore = load();
        const result =
          mode === 'cli'
            ? await gradeWithCli(directory, input, criteria)
            : ((await runChild(['scale-curve-child', input, join(directory, `cache-${mode}.sqlite`), join(directory, `results-${mode}.jsonl`), String(Math.ceil(criteria / criteriaPerItem))])) as Record<string, unknown>);
        rows.push({ scenario: `scale curve ${mode} ${criteria.toLocaleString('en')} criteria`, mode, criteria, input_mb: statSync(input).size / 1e6, ...result, load: `${loadBefore}–${load()}` });
      }
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  }
  return rows;
}
