/**
 * `rubricate bench-local`: how fast is the embedded judge on this machine? Measures raw
 * llama.cpp speed and each grading plan on a HealthBench-like item, and projects the time of
 * the 100-example HealthBench set. `--model default` measures the embedded default model (it
 * must already be downloaded or named by RUBRICATE_MODEL); `--shape` writes a model with the
 * default model's shapes and random weights, so the figures come without any download.
 */
import path from 'node:path';
import type { Command } from 'commander';
import { RubricateError } from '../../errors.js';
import { organizeHelp } from '../help.js';
import type { CommandContext } from '../context.js';

interface BenchLocalFlags {
  model?: string;
  shape?: string;
  quantization: string;
  criteria: string;
  threads?: string;
  contextSize: string;
  plans?: string[];
  json?: boolean;
  quick?: boolean;
}

function positiveInteger(value: string, field: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new RubricateError('CONFIG_INVALID', `--${field} must be a positive integer (got ${JSON.stringify(value)})`, { field });
  return number;
}

export function registerBenchLocalCommand(program: Command, context: CommandContext): void {
  organizeHelp(
    program
      .command('bench-local')
      .description('measure the embedded local judge on this machine: raw llama.cpp speed, criteria/s per grading plan, projected HealthBench time')
      .option('--model <path|default>', 'a GGUF file, or "default" for the embedded default model (already downloaded, or RUBRICATE_MODEL)')
      .option('--shape <name>', 'instead of a model: generate one with these shapes and random weights (qwen3-4b, qwen3-1.7b, qwen3-0.6b) into the model cache')
      .option('--quantization <type>', 'with --shape: q4_0 or q8_0', 'q4_0')
      .option('--criteria <n>', 'criteria graded per plan (whole items)', '12')
      .option('--threads <n>', 'llama.cpp threads (default: as the local judge chooses: the math cores the load average leaves free)')
      .option('--context-size <n>', 'tokens per sequence', '8192')
      .option('--plans <name...>', 'only these plans (default: all)')
      .option('--quick', 'a few minutes: raw speed and one probe call per explanation length, then each plan projected from its exact token counts')
      .option('--json', 'print the measurements as JSON'),
    [
      'rubricate bench-local --model default --quick',
      'rubricate bench-local --shape qwen3-0.6b --criteria 12',
    ],
  )
    .action(async (flags: BenchLocalFlags) => {
      const { normalizeItem } = await import('../../rubric/normalize.js');
      const { assertPlansKnown, formatLocalBenchmark, projectLocalBenchmark, runLocalBenchmark, syntheticHealthBenchItem } = await import('../../pipeline/local-judge-benchmark.js');
      const { defaultModelCacheDirectory, resolveDefaultLocalModel, resolveModelReference } = await import('../../judges/llamacpp/model-file.js');
      if ((flags.model === undefined) === (flags.shape === undefined)) throw new RubricateError('CONFIG_INVALID', 'give exactly one of --model PATH|default and --shape NAME', { field: 'model' });
      if (flags.quantization !== 'q4_0' && flags.quantization !== 'q8_0') throw new RubricateError('CONFIG_INVALID', '--quantization must be q4_0 or q8_0', { field: 'quantization' });
      const criteria = positiveInteger(flags.criteria, 'criteria');
      const contextSize = positiveInteger(flags.contextSize, 'context-size');
      const threads = flags.threads === undefined ? undefined : positiveInteger(flags.threads, 'threads');
      let modelPath: string;
      let label: string;
      const randomWeights = flags.shape !== undefined;
      if (flags.shape !== undefined) {
        const { ensureShapedGguf } = await import('../../testing/shaped-gguf.js');
        context.stderr(`writing (or reusing) a ${flags.shape}-shaped model with random weights …`);
        const file = await ensureShapedGguf(path.join(defaultModelCacheDirectory(), 'bench'), flags.shape as never, flags.quantization);
        modelPath = file.path;
        label = `${flags.shape} shapes, ${flags.quantization}, random weights (${(file.parameters / 1e9).toFixed(2)}B parameters, ${(file.bytes / 2 ** 30).toFixed(2)} GiB) at ${file.path}; explanations pinned to fixed lengths`;
        context.stderr(`model file: ${file.path}`);
      } else if (flags.model === 'default') {
        modelPath = await resolveDefaultLocalModel({ cacheDirectory: defaultModelCacheDirectory(), download: false });
        label = modelPath;
      } else {
        modelPath = await resolveModelReference(String(flags.model), { cacheDirectory: defaultModelCacheDirectory(), download: false });
        label = modelPath;
      }
      const items = Array.from({ length: Math.ceil(criteria / 12) }, (_, index) => normalizeItem(syntheticHealthBenchItem(index)));
      const plans = flags.plans ? assertPlansKnown(flags.plans) : undefined;
      const onProgress = (message: string) => context.stderr(message);
      const report = flags.quick
        ? await projectLocalBenchmark({ modelPath, items, threads, contextSize, criteriaPerPlan: criteria, pinExplanations: randomWeights, plans, onProgress })
        : await runLocalBenchmark({ modelPath, items, threads, contextSize, criteriaPerPlan: criteria, pinExplanations: randomWeights, plans, onProgress });
      context.stdout(flags.json ? JSON.stringify({ model: label, ...report }, null, 2) : formatLocalBenchmark(report, label));
    });
}
