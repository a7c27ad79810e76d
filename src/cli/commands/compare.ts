import type { Command } from 'commander';
import { storeFilesOf } from '../store-options.js';
import { checkFiles, JsonLinesWriter, writeFileAtomic } from '../../util/files.js';
import { addJudgeOptions } from '../judge-options.js';
import { ProgressReporter } from '../progress.js';
import { countInputRecords } from '../input-count.js';
import { addDrainTimeoutOption, drainSignal, reportInterrupted, type DrainFlags } from '../interrupt.js';
import { admitUntilStopped, type AdmissionState } from '../../pipeline/admission.js';
import { quietHelp, type CommandContext } from '../context.js';
import { organizeHelp } from '../help.js';
import { InputReport } from '../input-report.js';
import { firstRecordId, refuseReplacingAnotherRun } from '../default-output.js';
import { Comparer, CompareSummaryBuilder, type CompareSummary } from '../../pipeline/compare.js';
import { getPairwiseImporter } from '../../formats/index.js';
import { addBatchOptions } from '../batch-options.js';
import { modelFromFlags, runSpecOf } from '../run-spec-flags.js';
import { addLimitOption, firstRecords } from '../input-options.js';
import { openRunSession, type RunSession, type SessionFlags } from '../session.js';
import type { PairwiseImportRecord } from '../../rubric/records.js';
import type { RunSpec } from '../../spec/run-spec.js';
import { defaultPrices, loadPriceTable } from '../../engine/usage.js';
import { addDryRunOption, dryRunUsage, printDryRun } from '../dry-run-options.js';
import { RubricateError, exitCodes, type SerializedError } from '../../errors.js';
import { ErrorTally, formatErrorCounts } from '../../pipeline/error-summary.js';
import { madeUpNotice } from '../../util/made-up.js';
import { runIndexPath, startRunRecording, type RunRecording } from '../../results/run-index.js';
import { addRunIndexOption } from '../run-index-options.js';

interface CompareFlags extends SessionFlags, DrainFlags {
  format: string;
  input: string;
  out: string;
  summary?: string;
  swap: boolean;
  ties: boolean;
  overall: boolean;
  prices?: string;
  force?: boolean;
  limit?: number;
  report?: string;
  runIndex?: string;
}

export function registerCompareCommand(program: Command, context: CommandContext): void {
  const command = program
    .command('compare')
    .description('judge response A against response B (overall and per rubric criterion), in both orders by default')
    .option('--format <name>', 'pairs (rubricate JSONL), llmbar, pandalm, autoj, judgebench, hhh', 'pairs')
    .requiredOption('--input <file>', 'pairs file or a labelled pairwise data set');
  addLimitOption(command)
    .option('--out <file>', 'one JSON line per pair', 'compare.jsonl')
    .option('--summary <file>', 'write the summary JSON here (default: <out>.summary.json)')
    .option('--report <file>', 'also write an HTML report at the end')
    .option('--force', 'replace the default --out even when it holds the pairs of another run')
    .option('--no-swap', 'judge only the original order (no position-swap check)')
    .option('--no-ties', 'the judge must pick a winner')
    .option('--no-overall', 'with rubrics, compare per criterion only')
    .option('--quiet', quietHelp);
  addRunIndexOption(command);
  // Pairwise judging reads the sampling and the protocol of the plan; one judge, no jury.
  addJudgeOptions(command, ['sampling', 'protocol', 'alignment', 'guard', 'calls', 'fleet', 'text']);
  addBatchOptions(command);
  addDryRunOption(command);
  addDrainTimeoutOption(command);
  command.option('--prices <file>', 'price table for --dry-run (JSON/YAML, USD per 1M tokens)');
  organizeHelp(command, [
    'rubricate compare --format pairs --input examples/pairs/pairs.jsonl --judge openai:gpt-4.1-mini --out pairs-compare.jsonl',
    'rubricate compare --format llmbar --input examples/llmbar/dataset.json --judge scripted --limit 1 --out smoke-compare.jsonl',
  ]);
  command.action(async (flags: CompareFlags, self: Command) => {
    context.exitCode = await runCompare(flags, runSpecOf(self), context, self.getOptionValueSource('out') === 'default');
  });
}

async function runCompare(flags: CompareFlags, spec: RunSpec, context: CommandContext, outIsDefault: boolean): Promise<number> {
  const importer = getPairwiseImporter(flags.format);
  checkFiles({
    inputs: [{ flag: 'input', path: flags.input, folder: true }],
    outputs: [{ flag: 'out', path: flags.out }, { flag: 'summary', path: flags.summary ?? `${flags.out}.summary.json` }, { flag: 'report', path: flags.report }],
    keep: storeFilesOf(flags),
  });
  if (spec.judges.length > 1) throw new RubricateError('CONFIG_INVALID', 'compare takes one judge', { field: 'judge' });
  const session = await openRunSession(spec, modelFromFlags(flags, 'judge').credentials, flags, { context, out: flags.out });
  const judge = session.judge;
  const progress = new ProgressReporter(ProgressReporter.displayFor(process.stderr, Boolean(flags.quiet)), 'comparing');
  /** The pairs the run compares, as it reads them (--limit applied). */
  const pairs = () => firstRecords(importer.read(flags.input, {}), flags.limit);
  const expectedTotal = countInputRecords({ format: importer.name, input: flags.input, read: pairs });
  expectedTotal.then((total) => progress.setTotal(total), () => undefined);
  const comparer = comparerFor(flags, spec, session, progress, context);
  let summary: CompareSummary;
  let recording: RunRecording | undefined;
  const errors = new ErrorTally();
  const builder = new CompareSummaryBuilder();
  const inputReport = new InputReport(context, { file: flags.input, format: importer.name, kind: 'pairs' });
  // One exit for every path: the session is closed here whatever happens (a completed run finishes it first).
  try {
    if (session.dryRun) {
      const usage = await dryRunUsage(comparer.compareStream(reportInvalid(pairs(), inputReport)));
      printDryRun(context, session.dryRun, usage, judge?.provenance.model, flags.prices ? loadPriceTable(flags.prices) : defaultPrices, { batch: Boolean(flags.batch) });
      return exitCodes.success;
    }
    await refuseReplacingAnotherRun({ out: flags.out, isDefault: outIsDefault, force: flags.force, thisRun: async () => ({ firstId: await firstRecordId(pairs()), judge: judge?.provenance.id }) });
    // The run history: a "running" line now, its ending when it ends (`rubricate view` lists it).
    recording = startRunRecording(runIndexPath(flags.runIndex), { results: flags.out, command: 'compare', judges: judge ? [judge.provenance.id] : [], input: flags.input }, (message) => context.stderr(`warning: ${message}`));
    const { written, held, admission } = await writeComparisons(comparer, reportInvalid(pairs(), inputReport), flags.out, { signal: context.signal, errors, builder });
    progress.stop();
    // Partial: no summary written as if final; a --no-cache journal is kept for the rerun.
    if (context.signal.aborted && (held || !admission.exhausted)) {
      recording?.end('interrupted');
      return reportInterrupted(context, written, await expectedTotal.catch(() => undefined), 'pairs');
    }
    summary = builder.finish();
    await writeFileAtomic(flags.summary ?? `${flags.out}.summary.json`, `${JSON.stringify(summary, null, 2)}\n`);
    if (flags.report) {
      const { writeReportFromResults } = await import('../../report/index.js');
      await writeReportFromResults({ input: flags.out, out: flags.report });
    }
    // Every pair was read: the batches it used are delivered (an interrupted run leaves them for the rerun to attach to).
    session.finish();
    recording?.end('finished', { items: { n: summary.n, ok: summary.n_ok, error: summary.n_error, invalid: summary.n_invalid } });
  } catch (error) {
    recording?.end(context.signal.aborted ? 'interrupted' : 'failed', { error: RubricateError.isInstance(error) ? `${error.code}: ${error.message}` : String(error) });
    if (context.signal.aborted) return reportInterrupted(context, undefined, undefined, 'pairs');
    throw error;
  } finally {
    progress.stop();
    await session.close();
  }
  inputReport.finish();
  if (!flags.quiet) printCompareSummary(context, summary, flags.out);
  const guard = comparer.grader.selfPreference?.counts;
  if (guard && guard.flagged > 0) context.stderr(`warning: self-preference: ${guard.flagged} pair(s) have a response from the judge's own model or family${guard.refused > 0 ? `; ${guard.refused} not compared (--self-preference refuse)` : ' (recorded as self_preference on their lines)'}`);
  const errorLines = formatErrorCounts(errors.top());
  if (errorLines.length > 0) context.stderr(errorLines.join('\n'));
  return summary.n_error + summary.n_invalid > 0 ? exitCodes.itemsFailed : exitCodes.success;
}

/** The run's `Comparer`: its plan as given (what the pairwise mode does not read is refused by name), one judge, the session's store and call policy. */
function comparerFor(flags: CompareFlags, spec: RunSpec, session: RunSession, progress: ProgressReporter, context: CommandContext): Comparer {
  const { calls, store } = session.graderOptions();
  return new Comparer({
    judge: session.judge,
    store,
    plan: spec.plan,
    calls,
    guard: spec.guard,
    swap: flags.swap,
    allowTies: flags.ties,
    overall: flags.overall,
    omitText: spec.omitText,
    onEvent: progress.onEvent,
    stopSignal: context.signal,
    signal: drainSignal(context.signal, flags),
  });
}

/**
 * The comparisons written in input order as they come. After a stop, the first pair in error
 * may just have been cancelled: it and everything after it stay unwritten (`held`).
 */
async function writeComparisons(comparer: Comparer, pairs: AsyncIterable<PairwiseImportRecord>, out: string, run: { signal: AbortSignal; errors: ErrorTally; builder: CompareSummaryBuilder }): Promise<{ written: number; held: boolean; admission: AdmissionState }> {
  const writer = new JsonLinesWriter(out);
  const admission: AdmissionState = { exhausted: false, admitted: 0 };
  let held = false;
  let written = 0;
  try {
    for await (const record of comparer.compareStream(admitUntilStopped(pairs, run.signal, admission))) {
      if (held || (run.signal.aborted && record.status === 'error')) {
        held = true;
        continue;
      }
      await writer.write(record);
      written += 1;
      run.builder.add(record);
      run.errors.add((record as { error?: SerializedError }).error);
    }
  } catch (error) {
    await writer.discard();
    throw error;
  }
  await writer.close();
  return { written, held, admission };
}

async function* reportInvalid<T extends { kind: string }>(records: AsyncIterable<T>, report: InputReport): AsyncGenerator<T> {
  for await (const record of report.watch(records)) {
    if (record.kind === 'invalid') report.invalid((record as unknown as { error: RubricateError }).error);
    yield record;
  }
}

function percent(value: number | null | undefined): string {
  return value === null || value === undefined ? 'n/a' : `${(value * 100).toFixed(1)}%`;
}

function printCompareSummary(context: CommandContext, summary: CompareSummary, out: string): void {
  const { overall } = summary;
  const lines = [
    // Made-up verdicts are said first, before any figure a reader could take for a measurement.
    ...(summary.scripted_by !== undefined ? [madeUpNotice(summary.scripted_by)] : []),
    `${summary.n} pairs: ${summary.n_ok} ok, ${summary.n_error} error, ${summary.n_invalid} invalid`,
    `A vs B: ${overall.win} win, ${overall.tie} tie, ${overall.loss} loss, ${overall.inconsistent} order-inconsistent`,
    `win rate of A: ${percent(overall.win_rate.value)}${overall.win_rate.ci95 ? ` (95% CI ${percent(overall.win_rate.ci95[0])}–${percent(overall.win_rate.ci95[1])})` : ''}; position consistency ${percent(overall.position_consistency.value)}`,
  ];
  const preference = summary.preference.overall;
  if (preference.delta !== null) {
    lines.push(
      `preference for A (A − B per comparison, paired z-test, normal approximation): ${preference.delta.toFixed(3)}${preference.ci95 ? ` (95% CI ${preference.ci95[0].toFixed(3)} to ${preference.ci95[1].toFixed(3)})` : ''}, p ${preference.p_value === null ? 'n/a' : preference.p_value.toPrecision(3)}${preference.comparisons_for_power_80 !== null ? `; ${preference.comparisons_for_power_80} comparisons detect a preference this size at 80% power` : ''}`,
    );
  }
  const agreement = summary.agreement?.overall;
  if (agreement) {
    lines.push(
      `against gold labels: accuracy ${percent(agreement.accuracy.original)} (original order), ${percent(agreement.accuracy.swapped)} (swapped), ${percent(agreement.accuracy.average)} (average); positional agreement ${percent(agreement.positionalAgreement)}`,
    );
  }
  lines.push(`results: ${out}`);
  context.stderr(lines.join('\n'));
}
