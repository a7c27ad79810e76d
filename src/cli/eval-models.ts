/**
 * `rubricate eval --model A --model B`: one run per model (each its own results, metrics and
 * report, named after the model), then the paired comparison `report --compare` computes (items
 * matched by id, the paired difference with its bootstrap interval, per tag), B against A, printed
 * and written beside the results.
 */
import { extname } from 'node:path';
import { RubricateError, exitCodes } from '../errors.js';
import { backendOf } from '../judges/registry.js';
import type { Credentials, RunSpec } from '../spec/run-spec.js';
import { writeFileAtomic } from '../util/files.js';
import type { ResolvedConfig } from './config-file.js';
import type { CommandContext } from './context.js';
import { runGrade, type GradeFlags } from './commands/grade.js';

/** `results.jsonl` for `openai:gpt-4.1` → `results.openai-gpt-4.1.jsonl`. */
export function fileForModel(file: string, model: string): string {
  const extension = extname(file);
  const slug = model.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '');
  return `${file.slice(0, file.length - extension.length)}.${slug}${extension}`;
}

/** The files of each model's run, refused before anything runs when two models would share them. */
function filesOf(flags: GradeFlags, models: readonly string[]): Array<Pick<GradeFlags, 'out' | 'metrics' | 'report'>> {
  const files = models.map((model) => ({ out: fileForModel(flags.out, model), metrics: flags.metrics && fileForModel(flags.metrics, model), report: flags.report && fileForModel(flags.report, model) }));
  if (new Set(files.map((each) => each.out)).size !== files.length) throw new RubricateError('CONFIG_INVALID', `--model ${models.join(', --model ')}: two models would write the same results file; give different models`, { field: 'model' });
  return files;
}

export async function evalEachModel(flags: GradeFlags, spec: RunSpec, context: CommandContext, options: { credentials: Credentials; config?: ResolvedConfig; outIsDefault: boolean }): Promise<number> {
  const models = spec.models.map((model) => model.model ?? '');
  if (models.some((model) => model === '')) throw new RubricateError('CONFIG_INVALID', 'each --model needs a spec', { field: 'model' });
  // One --model-api-key is only ever sent to one provider.
  if (options.credentials.apiKey !== undefined && new Set(spec.models.map((model) => backendOf(model).prefix)).size > 1) {
    throw new RubricateError('CONFIG_INVALID', '--model-api-key would go to models of different providers: leave it out and set each provider\'s variable (OPENAI_API_KEY, ANTHROPIC_API_KEY, …)', { field: 'model-api-key' });
  }
  const files = filesOf(flags, models);
  let code: number = exitCodes.success;
  for (const [index, model] of spec.models.entries()) {
    context.stderr(`model ${index + 1} of ${models.length}: ${models[index]} → ${files[index].out}`);
    const ran = await runGrade({ ...flags, ...files[index] }, { ...spec, models: [model] }, context, { outIsDefault: options.outIsDefault, sample: { credentials: options.credentials }, config: options.config });
    if (flags.dryRun) continue;
    // An interrupted or failed run stops here: the comparison needs every run whole.
    if (ran !== exitCodes.success && ran !== exitCodes.itemsFailed) return ran;
    if (code === exitCodes.success) code = ran;
  }
  if (!flags.dryRun) await writeComparison(context, models, files.map((each) => each.out), flags.out);
  return code;
}

/** Each later model against the first: the paired difference overall and per tag, on stderr and in `<out>.comparison.json`. */
async function writeComparison(context: CommandContext, models: readonly string[], outs: readonly string[], out: string): Promise<void> {
  const { collectRun } = await import('../report/collect.js');
  const { compareRuns } = await import('../report/compare.js');
  const baseline = await collectRun(outs[0], { keepTagScores: true });
  const comparisons = [];
  for (const [index, file] of outs.entries()) {
    if (index === 0) continue;
    const run = await collectRun(file, { keepTagScores: true, scoring: baseline.scoring.name });
    const { matchIndex: _matchIndex, ...summary } = compareRuns(run, baseline);
    comparisons.push({ model: models[index], baseline: models[0], run: file, baseline_run: outs[0], ...summary });
    const overall = summary.overall;
    context.stderr(
      overall
        ? `${models[index]} − ${models[0]}: ${overall.difference >= 0 ? '+' : ''}${overall.difference.toFixed(4)} (95% CI ${overall.ci95[0].toFixed(4)} to ${overall.ci95[1].toFixed(4)}) over ${overall.n} paired responses (${overall.run.toFixed(4)} vs ${overall.baseline.toFixed(4)})`
        : `${models[index]} − ${models[0]}: no response scored in both runs`,
    );
  }
  const file = fileForModel(out, 'comparison').replace(/\.jsonl$/, '.json');
  await writeFileAtomic(file, `${JSON.stringify(comparisons, null, 2)}\n`);
  context.stderr(`paired comparison: ${file} (rubricate report --input ${outs[1]} --compare ${outs[0]} for the report)`);
}
