/**
 * The embedded judge at real size (`npm run bench -- local-judge`): models with the default
 * judge's shapes (Qwen3-4B) and a smaller class (Qwen3-0.6B by default), Q4_0 random weights,
 * written on first use into the model cache (never committed), then measured by the same code
 * as `rubricate bench-local`: raw prefill/decode speed and each grading plan on the first
 * HealthBench examples (or a synthetic HealthBench-like item without the data set).
 *
 * By default the plans are projected from exact token counts and one probe call per explanation
 * length (a few minutes per model, as `bench-local --quick`); RUBRICATE_BENCH_LOCAL=measure
 * grades them (about 4 minutes for the 0.6B shape and 15 for the 4B shape on 2 idle cores at
 * 12 criteria).
 *
 * Environment: RUBRICATE_BENCH_SHAPES (comma list, default "qwen3-0.6b,qwen3-4b"),
 * RUBRICATE_BENCH_CRITERIA (criteria per plan, default 12), RUBRICATE_BENCH_THREADS,
 * RUBRICATE_BENCH_LOCAL (project | measure, default project).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { formatLocalBenchmark, projectLocalBenchmark, runLocalBenchmark, syntheticHealthBenchItem, type LocalBenchmarkReport } from '../src/pipeline/local-judge-benchmark.js';
import { defaultModelCacheDirectory } from '../src/judges/llamacpp/model-file.js';
import { normalizeItem } from '../src/rubric/normalize.js';
import type { Item } from '../src/rubric/schema.js';
import { ensureShapedGguf, type ModelShapeName } from '../src/testing/shaped-gguf.js';
import { defaultHealthBenchFile, loadHealthBenchItems } from './support/healthbench.js';

async function benchItems(criteria: number): Promise<{ items: Item[]; source: string }> {
  const file = defaultHealthBenchFile();
  if (!existsSync(file)) return { items: [normalizeItem(syntheticHealthBenchItem())], source: 'synthetic HealthBench-like item (data set not found)' };
  const loaded = await loadHealthBenchItems(file, { limit: Math.max(1, Math.ceil(criteria / 4)) });
  const items = loaded.map((item) =>
    normalizeItem({ id: item.id, prompt: item.prompt, response: item.response, rubric: { criteria: item.criteria.map((criterion) => ({ text: criterion.text, points: criterion.points })) } }),
  );
  return { items, source: `HealthBench oss_eval (first examples with an ideal completion)` };
}

export async function runLocalJudgeBenchmark(): Promise<Array<{ scenario: string; model: string; items: string; report: LocalBenchmarkReport; table: string }>> {
  const shapes = (process.env.RUBRICATE_BENCH_SHAPES ?? 'qwen3-0.6b,qwen3-4b').split(',').map((name) => name.trim()) as ModelShapeName[];
  const criteria = Number(process.env.RUBRICATE_BENCH_CRITERIA ?? 12);
  const threads = process.env.RUBRICATE_BENCH_THREADS ? Number(process.env.RUBRICATE_BENCH_THREADS) : undefined;
  const { items, source } = await benchItems(criteria);
  const rows = [];
  for (const shape of shapes) {
    process.stderr.write(`  model ${shape}: writing or reusing …\n`);
    const file = await ensureShapedGguf(path.join(defaultModelCacheDirectory(), 'bench'), shape, 'q4_0');
    const label = `${shape} shapes, Q4_0 random weights, ${(file.parameters / 1e9).toFixed(2)}B parameters, ${(file.bytes / 2 ** 30).toFixed(2)} GiB`;
    const onProgress = (message: string) => process.stderr.write(`  ${shape}: ${message}\n`);
    const report =
      process.env.RUBRICATE_BENCH_LOCAL === 'measure'
        ? await runLocalBenchmark({ modelPath: file.path, items, threads, contextSize: 8192, criteriaPerPlan: criteria, pinExplanations: true, onProgress })
        : await projectLocalBenchmark({ modelPath: file.path, items, threads, contextSize: 8192, criteriaPerPlan: criteria, pinExplanations: true, onProgress });
    rows.push({ scenario: `local-judge ${shape}`, model: label, items: source, report, table: formatLocalBenchmark(report, label) });
  }
  return rows;
}
