/**
 * `rubricate improve`: rubric-guided improvement of responses. Best-of-N over responses the
 * generator samples (`--best-of N`), then `--rounds R` revisions that show the generator what the
 * grading found; the best graded response of each item is its results line, with every round's
 * score under `improvement`. `--batch` and `--dry-run` as for every command that calls models.
 */
import type { Command } from 'commander';
import { exitCodes, RubricateError } from '../../errors.js';
import { improveItem, type Improvement } from '../../generation/improve.js';
import type { ResultRecord } from '../../results/results.js';
import { getItemImporter, itemImporters } from '../../formats/index.js';
import { checkRepeatCount, type RunSpec } from '../../spec/run-spec.js';
import { mean } from '../../statistics/descriptive.js';
import { checkFiles, JsonLinesWriter, writeFileAtomic } from '../../util/files.js';
import { mapInOrder } from '../../util/ordered-stream.js';
import { quietHelp, reportInputError, type CommandContext } from '../context.js';
import { addGeneratorOptions } from '../generator-options.js';
import { addInputOptions, importOptionsFrom, refuseInapplicableFlags, type InputFlags } from '../input-options.js';
import { addJudgeOptions, parseNumber, parsePositiveInteger } from '../judge-options.js';
import { addModelCallOptions, costLine, drain, prepareModelCalls, type ModelCallFlags } from '../model-calls.js';
import { runSpecOf } from '../run-spec-flags.js';
import { storeFilesOf } from '../store-options.js';
import { organizeHelp } from '../help.js';

interface ImproveFlags extends ModelCallFlags, InputFlags {
  out: string;
  metrics?: string;
  bestOf: number;
  rounds: number;
  responseTemperature: number;
  responseMaxTokens: number;
}

export function registerImproveCommand(program: Command, context: CommandContext): void {
  const command = program.command('improve').description('improve responses against their rubrics: best-of-N over sampled responses, then revisions guided by the criteria each missed');
  addInputOptions(command, { formatHelp: `input format (${itemImporters.names().join(', ')})`, responseFromVerb: 'start from' });
  command
    .requiredOption('--out <file>', 'results JSONL: the best response of each item, graded, with every round under `improvement`')
    .option('--metrics <file>', 'write the mean score per round and the gains as JSON here')
    .option('--best-of <n>', 'responses sampled from the generator to pick the best of (0: start from each item\u2019s response)', (value: string) => (value === '0' ? 0 : parsePositiveInteger('best-of')(value)), 0)
    .option('--rounds <n>', 'revision rounds after the start', (value: string) => (value === '0' ? 0 : parsePositiveInteger('rounds')(value)), 2)
    .option('--response-temperature <t>', 'sampling temperature of sampled and revised responses', parseNumber('response-temperature', 0), 1)
    .option('--response-max-tokens <n>', 'max tokens per sampled or revised response', parsePositiveInteger('response-max-tokens'), 1024)
    .option('--quiet', quietHelp);
  addGeneratorOptions(command);
  addJudgeOptions(command);
  addModelCallOptions(command);
  organizeHelp(command, [
    'rubricate improve --input examples/items.jsonl --generator openai:gpt-4.1-mini --judge openai:gpt-4.1 --best-of 4 --rounds 2 --out improved.jsonl',
    'rubricate improve --input examples/items.jsonl --generator openai:gpt-4.1-mini --judge openai:gpt-4.1 --rounds 1 --metrics improve-metrics.json --out improved.jsonl',
  ]);
  command.action(async (flags: ImproveFlags, self: Command) => {
    context.exitCode = await runImprove(flags, runSpecOf(self), context);
  });
}

type Outcome = { kind: 'invalid'; line: ResultRecord } | { kind: 'improved'; line: ResultRecord & { improvement: Improvement } };

async function runImprove(flags: ImproveFlags, spec: RunSpec, context: CommandContext): Promise<number> {
  if (flags.bestOf === 0 && flags.rounds === 0) throw new RubricateError('CONFIG_INVALID', 'give --best-of N or --rounds R (revisions), or both', { field: 'rounds' });
  checkRepeatCount(spec.limits, '--best-of', flags.bestOf);
  checkRepeatCount(spec.limits, '--rounds', flags.rounds);
  const importer = getItemImporter(flags.format);
  refuseInapplicableFlags(flags, importer);
  checkFiles({
    inputs: [{ flag: 'input', path: flags.input }, { flag: 'responses', path: flags.responses }, { flag: 'rubrics', path: flags.rubrics }, { flag: 'prices', path: flags.prices }],
    outputs: [{ flag: 'out', path: flags.out }, { flag: 'metrics', path: flags.metrics }],
    keep: storeFilesOf(flags),
  });
  const importOptions = await importOptionsFrom(flags, context);
  const models = await prepareModelCalls(flags, { ...spec, scoring: { ...spec.scoring, name: spec.scoring.name ?? importer.defaultScoring ?? 'weighted_mean' } }, context, { out: flags.out, grading: true });
  const improveAll = () => {
    const grader = models.grader();
    const options = { generator: models.generator, grader, samples: flags.bestOf, rounds: flags.rounds, temperature: flags.responseTemperature, maxTokens: flags.responseMaxTokens };
    return mapInOrder(importer.read(flags.input, importOptions), async (read): Promise<Outcome> => {
      if (read.kind === 'invalid') {
        reportInputError(context, read.error);
        return { kind: 'invalid', line: { id: read.id ?? '', status: 'invalid', score: null, criteria: [], error: read.error.toJSON(), line: read.line } as ResultRecord };
      }
      const { record, improvement } = await improveItem(read.item, options);
      return { kind: 'improved', line: { ...record, line: read.line, improvement } };
    }, { window: models.window });
  };
  try {
    if (models.dryRun) {
      await models.dryRun.estimate(() => drain(improveAll()), {
        command: 'improve',
        planned: true,
        assumptions: [`every item gets its ${flags.bestOf} sample(s) and all ${flags.rounds} revision round(s): synthetic verdicts are all "met" only where a schema asks, so a real run may stop revising earlier (nothing left to fix)`],
      });
      return exitCodes.success;
    }
    const writer = new JsonLinesWriter(flags.out);
    const improvements: Improvement[] = [];
    let failed = 0;
    try {
      for await (const outcome of improveAll()) {
        await writer.write(outcome.line);
        if (outcome.kind === 'invalid' || outcome.line.status !== 'ok') failed += 1;
        if (outcome.kind === 'improved') {
          improvements.push(outcome.line.improvement);
          if (!flags.quiet) {
            const { start_score: start, best_score: best, best_round: round } = outcome.line.improvement;
            context.stderr(`${outcome.line.id}: ${start === null ? 'no start score' : start.toFixed(3)} → ${best === null ? 'no score' : best.toFixed(3)}${round !== null ? ` (round ${round})` : ''}`);
          }
        }
      }
    } catch (error) {
      await writer.discard();
      if (context.signal.aborted) {
        context.stderr('interrupted: answers already paid for are in the cache; rerun the same command to resume');
        return exitCodes.interrupted;
      }
      throw error;
    }
    await writer.close();
    const summary = summarize(improvements);
    if (flags.metrics) await writeFileAtomic(flags.metrics, `${JSON.stringify({ ...summary, usage: { generator: models.generator.usage } }, null, 2)}\n`);
    models.finish();
    const format = (value: number | null) => (value === null ? 'n/a' : value.toFixed(4));
    if (!flags.quiet) context.stderr(
      [
        `${improvements.length} items: mean start ${format(summary.mean_start_score)}, mean best ${format(summary.mean_best_score)}, mean gain ${format(summary.mean_gain)}; ${summary.improved} improved, ${summary.round_errors} round(s) in error`,
        `mean score by round: ${summary.by_round.map((entry) => `${entry.round}: ${format(entry.mean_score)} (n=${entry.graded})`).join(', ')}`,
        costLine({ generator: models.costOf('generator', models.generator.usage), judge: null }),
        `results: ${flags.out}`,
      ].join('\n'),
    );
    return failed > 0 ? exitCodes.itemsFailed : exitCodes.success;
  } finally {
    await models.close();
  }
}

/** The gain per round and overall, over the items that had a start score. */
function summarize(improvements: readonly Improvement[]) {
  const rounds = Math.max(0, ...improvements.map((improvement) => improvement.rounds.length));
  const by_round = Array.from({ length: rounds }, (_, round) => {
    const scores = improvements.map((improvement) => improvement.rounds.find((entry) => entry.round === round)?.score).filter((score): score is number => typeof score === 'number');
    return { round, graded: scores.length, mean_score: scores.length > 0 ? mean(scores) : null };
  });
  const started = improvements.filter((improvement) => improvement.start_score !== null && improvement.best_score !== null);
  return {
    items: improvements.length,
    mean_start_score: started.length > 0 ? mean(started.map((improvement) => improvement.start_score!)) : null,
    mean_best_score: started.length > 0 ? mean(started.map((improvement) => improvement.best_score!)) : null,
    mean_gain: started.length > 0 ? mean(started.map((improvement) => improvement.best_score! - improvement.start_score!)) : null,
    improved: started.filter((improvement) => improvement.best_score! > improvement.start_score!).length,
    round_errors: improvements.reduce((total, improvement) => total + improvement.rounds.filter((entry) => entry.status === 'error').length, 0),
    by_round,
  };
}
