/**
 * The scale curve (issue #49): 10⁴, 10⁵ and 10⁶ criteria graded per criterion against an
 * in-process judge that answers at once, each count in a fresh child process (its own peak
 * RSS and CPU), so what grows with the input shows as CPU per call or peak RSS growing.
 * The judge is in-process so the figures are the grader's own (no HTTP, no simulator).
 */
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { join } from 'node:path';
import { loadLibrary, syntheticItems } from './grading.js';
import { peakRssBytes } from './support/measure.js';
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

/** Parent: one child per count (SCALE_CRITERIA=10000,100000 to choose them), its input and cache in a temporary folder. */
export async function runScaleCurve(runChild: (args: string[]) => Promise<unknown>): Promise<unknown[]> {
  const counts = (process.env.SCALE_CRITERIA ?? '10000,100000,1000000').split(',').map(Number);
  const rows: unknown[] = [];
  for (const criteria of counts) {
    const directory = mkdtempSync(join(tmpdir(), 'rubricate-bench-curve-'));
    try {
      const input = join(directory, 'items.jsonl');
      await writeItems(input, criteria);
      const result = (await runChild(['scale-curve-child', input, join(directory, 'cache.sqlite'), join(directory, 'results.jsonl'), String(Math.ceil(criteria / criteriaPerItem))])) as Record<string, unknown>;
      rows.push({ scenario: `scale curve ${criteria.toLocaleString('en')} criteria`, criteria, input_mb: statSync(input).size / 1e6, ...result });
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  }
  return rows;
}
