import type { Command } from 'commander';
import { checkFiles, writeFileAtomic } from '../../util/files.js';
import { madeUpFields, madeUpNotice } from '../../util/made-up.js';
import { printMetricsSummary, reportInputError, type CommandContext } from '../context.js';
import { organizeHelp } from '../help.js';
import { scoreFile } from '../../pipeline/score-file.js';
import { getResultsImporter } from '../../formats/index.js';
import type { Metrics } from '../../scoring/types.js';
import { RubricateError, exitCodes } from '../../errors.js';
import { refuseInapplicableFlags } from '../input-options.js';
import { toSimpleEvalsMetrics } from '../../scoring/simple-evals-format.js';

interface ScoreFlags {
  format: string;
  input: string;
  out?: string;
  scoring?: string;
  examples?: string;
  metricsFormat: 'rubricate' | 'simple-evals';
  bootstrapSamples?: string;
  failedAsZero?: boolean;
}

export function registerScoreCommand(program: Command, context: CommandContext): void {
  organizeHelp(
    program
      .command('score')
      .description('recompute scores and metrics from graded results, without calling a judge')
      .option('--format <name>', 'results format: results (rubricate) or simple-evals', 'results')
      .requiredOption('--input <file>', 'results file')
      .option('--out <file>', 'metrics JSON (default: print to stdout)')
      .option('--scoring <name>', 'scoring to apply (default: the one recorded in the results, else healthbench)')
      .option('--examples <file>', 'simple-evals: HealthBench examples file, to add example-tag metrics')
      .option('--metrics-format <format>', 'rubricate (default) or simple-evals (flat "tag", "tag:n_samples" keys)', 'rubricate')
      .option('--failed-as-zero', 'count failed judge calls as "not met" (as ResearchRubrics, RuscaRL and AdvancedIF do); reported in the metrics'),
    [
      'rubricate score --input hb-results.jsonl --scoring weighted_mean',
      'rubricate score --format simple-evals --input examples/simple-evals/healthbench_allresults.json --metrics-format simple-evals',
    ],
  )
    .action(async (flags: ScoreFlags) => {
      context.exitCode = await runScore(flags, context);
    });
}

async function runScore(flags: ScoreFlags, context: CommandContext): Promise<number> {
  refuseInapplicableFlags({ examples: flags.examples }, getResultsImporter(flags.format));
  checkFiles({ inputs: [{ flag: 'input', path: flags.input }, { flag: 'examples', path: flags.examples }], outputs: [{ flag: 'out', path: flags.out }] });
  const { metrics, invalid, scored, madeUpBy } = await scoreFile(flags.input, {
    format: flags.format,
    scoring: flags.scoring,
    examples: flags.examples,
    failedAsZero: flags.failedAsZero,
    onInvalid: (error) => reportInputError(context, error),
    onWarning: (message) => context.stderr(`warning: ${message}`),
  });
  // Nothing to score is an error, not "n=0": say why.
  if (scored === 0) {
    throw new RubricateError('INPUT_INVALID', invalid > 0 ? `none of the ${invalid} lines is a valid results line (see the errors above); nothing to score` : 'the file holds no results lines; nothing to score', { file: flags.input });
  }
  reportFailedAsZero(context, metrics);
  const output = flags.metricsFormat === 'simple-evals' ? toSimpleEvalsMetrics(metrics) : { ...madeUpFields(madeUpBy), ...metrics };
  const text = `${JSON.stringify(output, null, 2)}\n`;
  if (flags.out) {
    await writeFileAtomic(flags.out, text);
    printMetricsSummary(context, metrics, { out: flags.out, madeUpBy });
  } else {
    if (madeUpBy !== undefined) context.stderr(madeUpNotice(madeUpBy));
    context.stdout(text);
  }
  return invalid > 0 || metrics.n_error > 0 ? exitCodes.itemsFailed : exitCodes.success;
}

/** Says plainly when failed judge calls were counted as "not met". */
export function reportFailedAsZero(context: CommandContext, metrics: Metrics): void {
  const counted = metrics.failed_as_zero;
  if (!counted) return;
  context.stderr(`--failed-as-zero: ${counted.criteria} failed judge call(s) in ${counted.items} item(s) counted as "not met"`);
}
