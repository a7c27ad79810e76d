import { fanOut, LocalJudgeForecast } from '../local-judge-forecast.js';
import type { Command } from 'commander';
import { storeFilesOf } from '../store-options.js';
import { checkFiles, writeFileAtomic } from '../../util/files.js';
import { addJudgeOptions } from '../judge-options.js';
import { ProgressReporter } from '../progress.js';
import { countInputRecords } from '../input-count.js';
import { addDrainTimeoutOption, drainSignal, reportInterrupted, type DrainFlags } from '../interrupt.js';
import { Grader, isLocalJudge, localJudgeDefaults } from '../../pipeline/grader.js';
import { gradeFile, type GradeFileOutcome } from '../../pipeline/grade-file.js';
import { getItemImporter, itemImporters } from '../../rubric/formats/index.js';
import { addInputOptions, addLimitOption, firstRecords, importOptionsFrom, refuseInapplicableFlags, type InputFlags } from '../input-options.js';
import { costOf, defaultPrices, loadPriceTable, priceFor } from '../../engine/usage.js';
import { exitCodes } from '../../errors.js';
import { printMetricsSummary, quietHelp, type CommandContext } from '../context.js';
import { organizeHelp } from '../help.js';
import { InputReport } from '../input-report.js';
import { formatErrorCounts } from '../../pipeline/error-summary.js';
import { firstRecordId, refuseReplacingAnotherRun } from '../default-output.js';
import { addQueueOptions, shardOf, type QueueFlags } from '../queue-options.js';
import { reportFailedAsZero } from './score.js';
import { addDryRunOption, dryRunUsage, printDryRun } from '../dry-run-options.js';
import { addBatchOptions } from '../batch-options.js';
import { modelFromFlags, runSpecOf } from '../run-spec-flags.js';
import { openRunSession, type SessionFlags } from '../session.js';
import type { RunSpec } from '../../spec/run-spec.js';
import type { ImportOptions } from '../../rubric/formats/types.js';

interface GradeFlags extends SessionFlags, InputFlags, QueueFlags, DrainFlags {
  out: string;
  limit?: number;
  metrics?: string;
  strict?: boolean;
  prices?: string;
  report?: string;
  force?: boolean;
}

export function registerGradeCommand(program: Command, context: CommandContext): void {
  const command = program.command('grade').description('grade responses against their rubrics and write one result line per item');
  addInputOptions(command, { formatHelp: `input format (${itemImporters.names().join(', ')})`, responseFromVerb: 'grade' });
  addLimitOption(command);
  command
    .option('--out <file>', 'results JSONL', 'results.jsonl')
    .option('--metrics <file>', 'write aggregate metrics JSON here')
    .option('--strict', 'stop at the first invalid input record')
    .option('--prices <file>', 'price table (JSON/YAML {model: {input, cached_input, output}} in USD per 1M tokens)')
    .option('--report <file>', 'also write an HTML report at the end')
    .option('--force', 'replace the default --out even when it holds the results of another run')
    .option('--quiet', quietHelp);
  addJudgeOptions(command, ['plan', 'batching', 'sampling', 'protocol', 'calls', 'jury', 'scoring', 'fleet', 'text']);
  addQueueOptions(command);
  addBatchOptions(command);
  addDryRunOption(command);
  addDrainTimeoutOption(command);
  organizeHelp(command, [
    'rubricate grade --format healthbench --input examples/healthbench/examples.jsonl --responses examples/healthbench/responses.jsonl --judge openai:gpt-4.1-mini --out hb-results.jsonl --report hb-report.html',
    'rubricate grade --input examples/items.jsonl --judge scripted --limit 2 --out smoke-results.jsonl   # a smoke run, offline',
  ]);
  command.action(async (flags: GradeFlags, self: Command) => {
    context.exitCode = await runGrade(flags, runSpecOf(self), context, self.getOptionValueSource('out') === 'default');
  });
}

async function runGrade(flags: GradeFlags, parsed: RunSpec, context: CommandContext, outIsDefault: boolean): Promise<number> {
  const importer = getItemImporter(flags.format);
  refuseInapplicableFlags(flags, importer);
  checkFiles({
    inputs: [{ flag: 'input', path: flags.input }, { flag: 'responses', path: flags.responses }, { flag: 'rubrics', path: flags.rubrics }, { flag: 'examples', path: flags.examples }, { flag: 'prices', path: flags.prices }],
    outputs: [{ flag: 'out', path: flags.out }, { flag: 'metrics', path: flags.metrics }, { flag: 'report', path: flags.report }],
    keep: storeFilesOf(flags),
  });
  const prices = flags.prices ? loadPriceTable(flags.prices) : defaultPrices;
  // The format's own scoring when none is named: resolved here, so queue workers score alike.
  const spec: RunSpec = { ...parsed, scoring: { ...parsed.scoring, name: parsed.scoring.name ?? importer.defaultScoring ?? 'weighted_mean' } };
  const skipped = new Map<string, number>();
  const importOptions: ImportOptions = {
    ...(await importOptionsFrom(flags, context)),
    judgeProtocol: spec.plan.protocol,
    onSkipped: (reason) => void skipped.set(reason, (skipped.get(reason) ?? 0) + 1),
  };
  const session = await openRunSession(spec, modelFromFlags(flags, 'judge').credentials, flags, { context, out: flags.out, queued: flags.queue !== undefined });
  const judge = session.judge;
  const forecast =
    judge && isLocalJudge(judge)
      ? new LocalJudgeForecast((line) => context.stderr(line), {
          judgeId: judge.provenance.id,
          criteriaPerCall: spec.plan.criteriaPerCall === 'all' ? Number.POSITIVE_INFINITY : spec.plan.criteriaPerCall,
          explanation: spec.plan.explanation ?? localJudgeDefaults.explanation,
          verdict: spec.plan.verdict ?? 'binary',
        })
      : undefined;
  /** The records the run grades, as the run reads them (the format's own skips, the shard and --limit applied). */
  const records = (options: typeof importOptions) => firstRecords(shardOf(importer.read(flags.input, options), flags.shard), flags.limit);
  const inputReport = new InputReport(context, { file: flags.input, format: importer.name, kind: 'items' });
  const expectedTotal = countInputRecords({
    format: importer.name,
    input: flags.input,
    responses: flags.responses,
    shard: flags.shard,
    read: () => records({ ...importOptions, onWarning: undefined, onSkipped: undefined }),
  }).then((total) => (flags.limit === undefined ? total : Math.min(total, flags.limit)));
  // A local judge's plan decides its speed, so the live bar names it beside the ETA.
  const progress = new ProgressReporter(ProgressReporter.enabledFor(process.stderr, Boolean(flags.quiet)), forecast ? `grading (${forecast.progressLabel})` : undefined);
  expectedTotal.then(
    (total) => {
      progress.setTotal(total);
      forecast?.setTotal(total);
    },
    () => undefined,
  );
  const grader = new Grader({
    ...session.graderOptions(),
    onEvent: fanOut(progress.onEvent, forecast?.onEvent),
    // Stop: no new item and no new call; in-flight calls get --drain-timeout to land, then are cancelled.
    stopSignal: context.signal,
    signal: drainSignal(context.signal, flags),
  });
  let outcome: GradeFileOutcome;
  let cost: number | null;
  // One exit for every path: the session is closed here whatever happens (a completed run finishes it first).
  try {
    if (!session.dryRun) {
      await refuseReplacingAnotherRun({
        out: flags.out,
        isDefault: outIsDefault,
        force: flags.force,
        thisRun: async () => ({ firstId: await firstRecordId(records({ ...importOptions, onWarning: undefined, onSkipped: undefined })), judge: session.judges.length === 1 ? judge?.provenance.id : undefined }),
      });
    }
    if (session.dryRun) {
      const usage = await dryRunUsage(grader.gradeStream(records(importOptions)));
      progress.stop();
      printDryRun(context, session.dryRun, usage, judge?.provenance.model, prices, { batch: Boolean(flags.batch) });
      return exitCodes.success;
    }
    const queueUrl = flags.queue;
    outcome = await gradeFile({
      grader,
      records: inputReport.watch(records(importOptions)),
      ...(queueUrl
        ? {
            results: async function* (records) {
              // BullMQ loads only for a queued run: it is most of a plain run's start-up otherwise.
              const { gradeThroughQueue } = await import('../../queue/grading-queue.js');
              // The spec travels whole: workers validate it with the same schema and add their own key and store.
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
      onInvalid: (error) => inputReport.invalid(error),
      stopSignal: context.signal,
    });
    progress.stop();
    // Partial: no metrics or report written as if final; a --no-cache journal is kept for the rerun.
    if (outcome.interrupted) return reportInterrupted(context, outcome.written, await expectedTotal.catch(() => undefined));
    // A jury of different models would need per-model usage for a cost: report none rather than a wrong one.
    const oneModel = session.judges.every((member) => member.provenance.model === judge?.provenance.model);
    cost = !judge ? 0 : oneModel ? costOf(outcome.usage, priceFor(judge.provenance.model, prices)) : null;
    const summary = {
      ...outcome.metrics,
      usage: { ...outcome.usage, cost_usd: cost },
      judge: grader.judgeInfo ?? null,
      ...(grader.agreement ? { jury: grader.agreement.summary() } : {}),
      ...(skipped.size > 0 ? { skipped: [...skipped].map(([reason, count]) => ({ count, reason })) } : {}),
    };
    if (flags.metrics) await writeFileAtomic(flags.metrics, `${JSON.stringify(summary, null, 2)}\n`);
    if (flags.report) {
      const { writeReportFromResults } = await import('../../report/index.js');
      await writeReportFromResults({ input: flags.out, out: flags.report });
    }
    session.finish();
  } catch (error) {
    if (context.signal.aborted) return reportInterrupted(context, undefined, undefined);
    throw error;
  } finally {
    progress.stop();
    await session.close();
  }
  const { metrics, usage, invalid: invalidSeen } = outcome;
  inputReport.finish();

  // --quiet: what went wrong still prints, the summary does not.
  if (flags.quiet) {
    const errorLines = formatErrorCounts(outcome.errors);
    if (errorLines.length > 0) context.stderr(errorLines.join('\n'));
  } else printMetricsSummary(context, metrics, { usage, cost, out: flags.out, checkMode: spec.scoring.checkMode ?? 'strict', errors: outcome.errors });
  reportFailedAsZero(context, metrics);
  for (const [reason, count] of skipped) context.stderr(`warning: skipped ${count} record(s): ${reason}`);
  if (grader.agreement && !flags.quiet) {
    const jury = grader.agreement.summary() as { fleiss_kappa: number | null; criteria_rated: number; disagreements: number };
    context.stderr(`jury: Fleiss' κ ${jury.fleiss_kappa === null ? 'n/a' : jury.fleiss_kappa.toFixed(3)} over ${jury.criteria_rated} criteria, ${jury.disagreements} with disagreeing votes`);
  }
  if (flags.strict && invalidSeen > 0) return exitCodes.itemsFailed;
  return metrics.n_error + metrics.n_invalid > 0 ? exitCodes.itemsFailed : exitCodes.success;
}
