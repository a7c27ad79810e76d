import { fanOut, LocalJudgeForecast } from '../local-judge-forecast.js';
import { Option, type Command } from 'commander';
import { writeFileAtomic } from '../../util/files.js';
import { addJudgeOptions, buildJudges, graderOptionsFrom, openStore, type JudgeFlags } from '../judge-options.js';
import { countLines, ProgressReporter } from '../progress.js';
import { Grader, isLocalJudge, localJudgeDefaults } from '../../pipeline/grader.js';
import { gradeFile, type GradeFileOutcome } from '../../pipeline/grade-file.js';
import { getItemImporter, itemImporters } from '../../rubric/formats/index.js';
import { withoutPrometheusSkips } from '../../rubric/formats/biggen.js';
import { addInputOptions, importOptionsFrom, type InputFlags } from '../input-options.js';
import { costOf, defaultPrices, loadPriceTable, priceFor } from '../../engine/usage.js';
import { exitCodes } from '../../errors.js';
import { checkRunnerFor } from '../../pipeline/check-runner.js';
import { printMetricsSummary, reportInputError, type CommandContext } from '../context.js';
import { gradeThroughQueue } from '../../queue/grading-queue.js';
import { addQueueOptions, runSpecFrom, shardOf, type QueueFlags } from '../queue-options.js';
import { getScoring } from '../../scoring/registry.js';
import { withFailedAsZero } from '../../scoring/failed-as-zero.js';
import { reportFailedAsZero } from './score.js';

interface GradeFlags extends JudgeFlags, InputFlags, QueueFlags {
  out: string;
  metrics?: string;
  scoring?: string;
  checkMode: 'strict' | 'loose';
  strict?: boolean;
  prices?: string;
  text: boolean;
  quiet?: boolean;
  report?: string;
  failedAsZero?: boolean;
}

export function registerGradeCommand(program: Command, context: CommandContext): void {
  const command = program.command('grade').description('grade responses against their rubrics and write one result line per item');
  addInputOptions(command, { formatHelp: `input format (${[...itemImporters.keys()].join(', ')})`, responseFromVerb: 'grade' });
  command
    .option('--out <file>', 'results JSONL', 'results.jsonl')
    .option('--metrics <file>', 'write aggregate metrics JSON here')
    .option('--scoring <name>', 'scoring: healthbench, weighted_mean, normalized, compliance, ifeval, profbench, … (default: the format\'s own)')
    .addOption(new Option('--check-mode <mode>', 'IFEval strict or loose evaluation of checks').choices(['strict', 'loose']).default('strict'))
    .option('--strict', 'stop at the first invalid input record')
    .option('--prices <file>', 'price table (JSON/YAML {model: {input, cached_input, output}} in USD per 1M tokens)')
    .option('--no-text', 'leave prompt and response text out of the results')
    .option('--report <file>', 'also write an HTML report at the end')
    .option('--failed-as-zero', 'count failed judge calls as "not met" in the metrics (as ResearchRubrics, RuscaRL and AdvancedIF do); reported, never the default')
    .option('--quiet', 'no progress bar');
  addJudgeOptions(command);
  addQueueOptions(command);
  command.action(async (flags: GradeFlags) => {
    context.exitCode = await runGrade(flags, context);
  });
}

async function runGrade(flags: GradeFlags, context: CommandContext): Promise<number> {
  const importer = getItemImporter(flags.format);
  const prices = flags.prices ? loadPriceTable(flags.prices) : defaultPrices;
  const importOptions = await importOptionsFrom(flags, context);

  // With --queue the workers call the judge (and hold the fleet limits); here it only names the run.
  const judges = await buildJudges(flags.queue ? { ...flags, globalConcurrency: undefined, rateLimit: undefined } : flags);
  const judge = judges[0];
  const closeJudges = async () => {
    for (const member of judges) await member.close?.();
  };
  const opened = await openStore(flags, flags.out);
  const progress = new ProgressReporter(ProgressReporter.enabledFor(process.stderr, Boolean(flags.quiet)));
  const totalSource = flags.responses ?? flags.input;
  const forecast =
    judge && isLocalJudge(judge)
      ? new LocalJudgeForecast((line) => context.stderr(line), {
          judgeId: judge.provenance.id,
          criteriaPerCall: flags.criteriaPerCall,
          explanation: flags.explanation ?? localJudgeDefaults.explanation,
          verdict: flags.verdict ?? 'binary',
        })
      : undefined;
  countLines(totalSource).then(
    (total) => {
      progress.setTotal(total);
      forecast?.setTotal(total);
    },
    () => undefined,
  );

  const scoringName = flags.scoring ?? importer.defaultScoring ?? 'weighted_mean';
  const grader = new Grader({
    judges,
    store: opened.store,
    checkRunner: checkRunnerFor(),
    checkMode: flags.checkMode,
    scoring: flags.failedAsZero ? withFailedAsZero(getScoring(scoringName)) : scoringName,
    omitText: !flags.text,
    onEvent: fanOut(progress.onEvent, forecast?.onEvent),
    signal: context.signal,
    ...graderOptionsFrom(flags),
  });

  const queueUrl = flags.queue;
  // BiGGen grades its llm_judge instances only with non-Prometheus judges; reproduce that.
  const skipped = { count: 0 };
  const skipsForPrometheus = flags.judgeProtocol === 'prometheus' && importer.name === 'biggen';
  const imported = importer.read(flags.input, importOptions);
  let outcome: GradeFileOutcome;
  try {
    outcome = await gradeFile({
      grader,
      records: shardOf(skipsForPrometheus ? withoutPrometheusSkips(imported, skipped) : imported, flags.shard),
      ...(queueUrl
        ? {
            results: async function* (records) {
              const spec = runSpecFrom(flags, { scoring: scoringName, checkMode: flags.checkMode, omitText: !flags.text });
              for await (const result of gradeThroughQueue(records, { url: queueUrl, spec, chunkSize: flags.chunkSize, signal: context.signal })) {
                // Progress and usage of every worker arrive with their results.
                progress.onEvent({ type: 'item', status: result.status });
                yield result;
              }
            },
          }
        : {}),
      out: flags.out,
      strict: flags.strict,
      onInvalid: (error) => reportInputError(context, error),
    });
  } catch (error) {
    progress.stop();
    opened.close();
    await closeJudges();
    if (context.signal.aborted) {
      context.stderr('interrupted: verdicts obtained so far are saved; rerun the same command to resume');
      return exitCodes.interrupted;
    }
    throw error;
  }
  progress.stop();
  const { metrics, usage, invalid: invalidSeen } = outcome;
  // A jury of different models would need per-model usage for a cost: report none rather than a wrong one.
  const oneModel = judges.every((member) => member.provenance.model === judge?.provenance.model);
  const cost = !judge ? 0 : oneModel ? costOf(usage, priceFor(judge.provenance.model, prices)) : null;
  const summary = {
    ...metrics,
    usage: { ...usage, cost_usd: cost },
    judge: grader.judgeInfo ?? null,
    ...(grader.agreement ? { jury: grader.agreement.summary() } : {}),
    ...(skipsForPrometheus ? { skipped: { llm_judge_instances: skipped.count, reason: 'BiGGen-Bench does not grade llm_judge instances with a Prometheus judge' } } : {}),
  };
  if (flags.metrics) await writeFileAtomic(flags.metrics, `${JSON.stringify(summary, null, 2)}\n`);
  if (flags.report) {
    const { writeReportFromResults } = await import('../../report/index.js');
    await writeReportFromResults({ input: flags.out, out: flags.report });
  }
  opened.finish();
  opened.close();
  await closeJudges();

  printMetricsSummary(context, metrics, { usage, cost, out: flags.out, checkMode: flags.checkMode });
  reportFailedAsZero(context, metrics);
  if (skipsForPrometheus) context.stderr(`skipped ${skipped.count} llm_judge instance(s), as BiGGen-Bench does with a Prometheus judge`);
  if (grader.agreement) {
    const jury = grader.agreement.summary() as { fleiss_kappa: number | null; criteria_rated: number; disagreements: number };
    context.stderr(`jury: Fleiss' κ ${jury.fleiss_kappa === null ? 'n/a' : jury.fleiss_kappa.toFixed(3)} over ${jury.criteria_rated} criteria, ${jury.disagreements} with disagreeing votes`);
  }
  if (flags.strict && invalidSeen > 0) return exitCodes.itemsFailed;
  return metrics.n_error + metrics.n_invalid > 0 ? exitCodes.itemsFailed : exitCodes.success;
}

