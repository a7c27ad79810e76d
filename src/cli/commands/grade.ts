import { fanOut, LocalJudgeForecast } from '../local-judge-forecast.js';
import { Option, type Command } from 'commander';
import { storeFilesOf } from '../store-options.js';
import { checkFiles, writeFileAtomic } from '../../util/files.js';
import { addJudgeOptions, buildJudges, graderOptionsFrom, openStore, type JudgeFlags } from '../judge-options.js';
import { ProgressReporter } from '../progress.js';
import { countInputRecords } from '../input-count.js';
import { addDrainTimeoutOption, drainSignal, reportInterrupted, type DrainFlags } from '../interrupt.js';
import { Grader, isLocalJudge, localJudgeDefaults } from '../../pipeline/grader.js';
import { gradeFile, type GradeFileOutcome } from '../../pipeline/grade-file.js';
import { getItemImporter, itemImporters } from '../../rubric/formats/index.js';
import { withoutPrometheusSkips } from '../../rubric/formats/biggen.js';
import { addInputOptions, importOptionsFrom, refuseInapplicableFlags, type InputFlags } from '../input-options.js';
import { costOf, defaultPrices, loadPriceTable, priceFor } from '../../engine/usage.js';
import { exitCodes, RubricateError } from '../../errors.js';
import { checkRunnerFor } from '../../pipeline/check-runner.js';
import { printMetricsSummary, reportInputError, type CommandContext } from '../context.js';
import { addQueueOptions, runSpecFrom, shardOf, type QueueFlags } from '../queue-options.js';
import { getScoring } from '../../scoring/registry.js';
import { withFailedAsZero } from '../../scoring/failed-as-zero.js';
import { reportFailedAsZero } from './score.js';
import { addDryRunOption, dryRunUsage, printDryRun } from '../dry-run-options.js';
import { createDryRunJudge, readOnlyStore } from '../../batch/dry-run.js';
import { addBatchOptions, batchEngineOptions, batchJudgesFrom, describeBatchEvent, type BatchedJudges, type BatchFlags } from '../batch-options.js';

interface GradeFlags extends JudgeFlags, InputFlags, QueueFlags, BatchFlags, DrainFlags {
  dryRun?: boolean;
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
  addInputOptions(command, { formatHelp: `input format (${itemImporters.names().join(', ')})`, responseFromVerb: 'grade' });
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
  addBatchOptions(command);
  addDryRunOption(command);
  addDrainTimeoutOption(command);
  command.action(async (flags: GradeFlags) => {
    context.exitCode = await runGrade(flags, context);
  });
}

async function runGrade(flags: GradeFlags, context: CommandContext): Promise<number> {
  const importer = getItemImporter(flags.format);
  refuseInapplicableFlags(flags, importer);
  checkFiles({
    inputs: [{ flag: 'input', path: flags.input }, { flag: 'responses', path: flags.responses }, { flag: 'rubrics', path: flags.rubrics }, { flag: 'examples', path: flags.examples }, { flag: 'prices', path: flags.prices }],
    outputs: [{ flag: 'out', path: flags.out }, { flag: 'metrics', path: flags.metrics }, { flag: 'report', path: flags.report }],
    keep: storeFilesOf(flags),
  });
  const prices = flags.prices ? loadPriceTable(flags.prices) : defaultPrices;
  const importOptions = await importOptionsFrom(flags, context);

  // With --queue the workers call the judge (and hold the fleet limits); here it only names the run.
  let judges = await buildJudges(flags.queue ? { ...flags, globalConcurrency: undefined, rateLimit: undefined } : flags);
  let batched: BatchedJudges | undefined;
  if (flags.batch && !flags.dryRun) {
    if (flags.queue) throw new RubricateError('CONFIG_INVALID', '--batch and --queue are two ways of sending the calls: give one of them', { field: 'batch' });
    batched = batchJudgesFrom(judges, flags, flags.out, (event) => {
      const line = describeBatchEvent(event);
      if (line && !flags.quiet) context.stderr(line);
    });
    judges = batched.judges;
  }
  const dryRun = flags.dryRun ? judges.map(createDryRunJudge) : undefined;
  if (dryRun) judges = dryRun;
  const judge = judges[0];
  const closeJudges = async () => {
    for (const member of judges) await member.close?.();
    batched?.batching.close();
  };
  // A dry run writes nothing, not even a --no-cache journal beside the output.
  const opened = await openStore(flags, flags.dryRun ? undefined : flags.out);
  const forecast =
    judge && isLocalJudge(judge)
      ? new LocalJudgeForecast((line) => context.stderr(line), {
          judgeId: judge.provenance.id,
          criteriaPerCall: flags.criteriaPerCall,
          explanation: flags.explanation ?? localJudgeDefaults.explanation,
          verdict: flags.verdict ?? 'binary',
        })
      : undefined;
  const skipsForPrometheus = flags.judgeProtocol === 'prometheus' && importer.name === 'biggen';
  /** The records the run grades, as the run reads them (shard and BiGGen's Prometheus skips applied). */
  const records = (options: typeof importOptions, skipped = { count: 0 }) => {
    const imported = importer.read(flags.input, options);
    return shardOf(skipsForPrometheus ? withoutPrometheusSkips(imported, skipped) : imported, flags.shard);
  };
  const expectedTotal = countInputRecords({
    format: importer.name,
    input: flags.input,
    responses: flags.responses,
    shard: flags.shard,
    read: () => records({ ...importOptions, onWarning: undefined }),
  });
  // A local judge's plan decides its speed, so the live bar names it beside the ETA.
  const progress = new ProgressReporter(ProgressReporter.enabledFor(process.stderr, Boolean(flags.quiet)), forecast ? `grading (${forecast.progressLabel})` : undefined);
  expectedTotal.then(
    (total) => {
      progress.setTotal(total);
      forecast?.setTotal(total);
    },
    () => undefined,
  );

  const scoringName = flags.scoring ?? importer.defaultScoring ?? 'weighted_mean';
  const grader = new Grader({
    judges,
    store: dryRun ? readOnlyStore(opened.store) : opened.store,
    checkRunner: checkRunnerFor(),
    checkMode: flags.checkMode,
    scoring: flags.failedAsZero ? withFailedAsZero(getScoring(scoringName)) : scoringName,
    omitText: !flags.text,
    onEvent: fanOut(progress.onEvent, forecast?.onEvent),
    // Stop: no new item and no new call; in-flight calls get --drain-timeout to land, then are cancelled.
    stopSignal: context.signal,
    signal: drainSignal(context.signal, flags),
    ...graderOptionsFrom(flags),
    ...(batched ? batchEngineOptions : {}),
  });

  if (dryRun) {
    try {
      const usage = await dryRunUsage(grader.gradeStream(records(importOptions)));
      progress.stop();
      printDryRun(context, dryRun, usage, judge?.provenance.model, prices, { batch: Boolean(flags.batch) });
      return exitCodes.success;
    } finally {
      progress.stop();
      opened.close();
      await closeJudges();
    }
  }

  const queueUrl = flags.queue;
  // BiGGen grades its llm_judge instances only with non-Prometheus judges; reproduce that.
  const skipped = { count: 0 };
  let outcome: GradeFileOutcome;
  try {
    outcome = await gradeFile({
      grader,
      records: records(importOptions, skipped),
      ...(queueUrl
        ? {
            results: async function* (records) {
              const spec = runSpecFrom(flags, { scoring: scoringName, checkMode: flags.checkMode, omitText: !flags.text });
              // BullMQ loads only for a queued run: it is most of a plain run's start-up otherwise.
              const { gradeThroughQueue } = await import('../../queue/grading-queue.js');
              const queued = gradeThroughQueue(records, {
                url: queueUrl,
                spec,
                chunkSize: flags.chunkSize,
                // First Ctrl-C: no new chunk, unclaimed ones taken back; chunks being graded get --drain-timeout to land.
                signal: context.signal,
                cancelSignal: drainSignal(context.signal, flags),
                reconnectWindowMs: flags.queueTimeout * 1000,
                onNotice: (message) => context.stderr(`queue: ${message}`),
              });
              for await (const result of queued) {
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
      stopSignal: context.signal,
    });
  } catch (error) {
    progress.stop();
    await opened.close();
    await closeJudges();
    if (context.signal.aborted) return reportInterrupted(context, undefined, undefined);
    throw error;
  }
  progress.stop();
  if (outcome.interrupted) {
    // Partial: no metrics or report written as if final; a --no-cache journal is kept for the rerun.
    await opened.close();
    await closeJudges();
    const total = await expectedTotal.catch(() => undefined);
    return reportInterrupted(context, outcome.written, total);
  }
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
  batched?.batching.finish();
  opened.finish();
  await opened.close();
  await closeJudges();

  printMetricsSummary(context, metrics, { usage, cost, out: flags.out, checkMode: flags.checkMode, errors: outcome.errors });
  reportFailedAsZero(context, metrics);
  if (skipsForPrometheus) context.stderr(`skipped ${skipped.count} llm_judge instance(s), as BiGGen-Bench does with a Prometheus judge`);
  if (grader.agreement) {
    const jury = grader.agreement.summary() as { fleiss_kappa: number | null; criteria_rated: number; disagreements: number };
    context.stderr(`jury: Fleiss' κ ${jury.fleiss_kappa === null ? 'n/a' : jury.fleiss_kappa.toFixed(3)} over ${jury.criteria_rated} criteria, ${jury.disagreements} with disagreeing votes`);
  }
  if (flags.strict && invalidSeen > 0) return exitCodes.itemsFailed;
  return metrics.n_error + metrics.n_invalid > 0 ? exitCodes.itemsFailed : exitCodes.success;
}

