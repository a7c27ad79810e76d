import { fanOut, LocalJudgeForecast } from '../local-judge-forecast.js';
import type { Command } from 'commander';
import { storeFilesOf } from '../store-options.js';
import { checkFiles, writeFileAtomic } from '../../util/files.js';
import { addJudgeOptions, parseNumber, parsePositiveInteger } from '../judge-options.js';
import { ProgressReporter } from '../progress.js';
import { countInputRecords, shardSize } from '../input-count.js';
import { shardStampFor, withShardStamp } from '../shard.js';
import type { ImportRecord } from '../../rubric/records.js';
import { addDrainTimeoutOption, drainSignal, reportInterrupted, type DrainFlags } from '../interrupt.js';
import { Grader } from '../../pipeline/grader.js';
import { gradingModeOf, gradingModes } from '../../pipeline/grading-modes.js';
import { gradeFile, type GradeFileOutcome } from '../../pipeline/grade-file.js';
import { getItemImporter, itemImporters } from '../../formats/index.js';
import { checkGroupField, groupSettingsOf, withGroupField } from '../../pipeline/group-grading.js';
import { addInputOptions, addLimitOption, firstRecords, importOptionsFrom, refuseInapplicableFlags, type InputFlags } from '../input-options.js';
import { costOf, defaultPrices, loadPriceTable, priceFor } from '../../engine/usage.js';
import { RubricateError, exitCodes } from '../../errors.js';
import { printMetricsSummary, printRunProblems, quietHelp, type CommandContext } from '../context.js';
import { organizeHelp } from '../help.js';
import { refuseOnLintErrors } from '../lint-input.js';
import { InputReport } from '../input-report.js';
import { autoTableItems, ItemTable, showItemTable } from '../item-table.js';
import { firstRecordId, refuseReplacingAnotherRun } from '../default-output.js';
import { addQueueOptions, shardOf, type QueueFlags } from '../queue-options.js';
import { reportFailedAsZero } from './score.js';
import { addDryRunOption, dryRunUsage, printDryRun } from '../dry-run-options.js';
import type { DryRunJudge } from '../../batch/dry-run.js';
import { addBatchOptions } from '../batch-options.js';
import { addBenchmarkOption, applyBenchmark } from '../benchmark-options.js';
import { modelFromFlags, runSpecOf } from '../run-spec-flags.js';
import { openRunSession, type RunSession, type SessionFlags } from '../session.js';
import { batchRecentReplies } from '../../store/index.js';
import { checkRepeatCount, type RunSpec } from '../../spec/run-spec.js';
import type { ImportOptions } from '../../formats/types.js';
import { readResultsAsItems } from '../../formats/results.js';
import { startRejudging, type Rejudging } from '../../pipeline/rejudge.js';
import { gradeRepeatedly } from '../../pipeline/repeats.js';
import { createStabilityTally, type StabilitySummary } from '../../scoring/stability.js';
import type { ResultRecord } from '../../results/results.js';
import type { Credentials } from '../../spec/run-spec.js';
import { openSampling, type OpenSampling } from '../sampling-options.js';
import { isScriptedSpec } from '../../sampling/scripted-model.js';
import { addConfigOption, resolvedConfigOf, withResolvedConfig, type ResolvedConfig } from '../config-file.js';
import { runIndexPath, runIndexVariable, startRunRecording, type RunRecording } from '../../results/run-index.js';
import type { Metrics } from '../../scoring/types.js';
import { madeUpBy, madeUpFields } from '../../util/made-up.js';
import { watchCanary } from '../canary-watch.js';

export interface GradeFlags extends SessionFlags, InputFlags, QueueFlags, DrainFlags {
  out: string;
  limit?: number;
  metrics?: string;
  strict?: boolean;
  prices?: string;
  report?: string;
  repeats?: number;
  stabilityThreshold?: number;
  force?: boolean;
  /** `--table` / `--no-table`: the per-item table after the run (unset: on a terminal for a few items). */
  table?: boolean;
  benchmark?: string;
  runIndex?: string;
  /** `--lint`: refuse to start when the input's rubrics have lint errors. */
  lint?: boolean;
  /** `--canary DIR`: the judge checked against the canary baseline pinned there. */
  canary?: string;
}

export function registerGradeCommand(program: Command, context: CommandContext): void {
  const command = program.command('grade').description('grade responses against their rubrics and write one result line per item');
  addInputOptions(command, { formatHelp: `input format (${itemImporters.names().join(', ')})`, responseFromVerb: 'grade', inputFrom: '--benchmark' });
  addBenchmarkOption(command);
  addLimitOption(command);
  command
    .option('--out <file>', 'results JSONL', 'results.jsonl')
    .option('--metrics <file>', 'write aggregate metrics JSON here')
    .option('--strict', 'stop at the first invalid input record')
    .option('--prices <file>', 'price table (JSON/YAML {model: {input, cached_input, output}} in USD per 1M tokens)')
    .option('--report <file>', 'also write an HTML report at the end')
    .option('--repeats <n>', 'grade every item n times (each repeat cached apart) and report how stable the verdicts and scores are; results keep the first repeat, with every repeat\'s verdicts and scores', parsePositiveInteger('repeats'))
    .option('--stability-threshold <score>', 'with --repeats: list the items whose score falls on both sides of this value across repeats', parseNumber('stability-threshold'))
    .option('--force', 'replace the default --out even when it holds the results of another run')
    .option('--lint', 'lint the input\'s rubrics first and refuse to start on lint errors, naming them (warnings are printed; rubricate lint lists every finding)')
    .option('--canary <dir>', 'check the judge against the canary baseline pinned in DIR (rubricate canary --baseline DIR): warn when its settings differ at the start, or its replies name a model the baseline never saw at the end')
    .option('--table', `print a table of the items after the run: id, score, criteria met/total, errors, made-up verdicts labelled (shown by itself on a terminal for ${autoTableItems} items or fewer)`)
    .option('--no-table', 'never print the item table')
    .option('--run-index <file>', `the run history this run adds its lines to (default: ${runIndexVariable}, else the user's state folder; "off" for none)`)
    .option('--quiet', quietHelp);
  addJudgeOptions(command, ['plan', 'agentic', 'alignment', 'calibration', 'batching', 'sampling', 'protocol', 'template', 'calls', 'jury', 'cascade', 'guard', 'scoring', 'fleet', 'text', 'requests', 'limits']);
  addQueueOptions(command);
  addBatchOptions(command);
  addDryRunOption(command);
  addDrainTimeoutOption(command);
  addConfigOption(command);
  organizeHelp(command, [
    'rubricate grade --format healthbench --input examples/healthbench/examples.jsonl --responses examples/healthbench/responses.jsonl --judge openai:gpt-4.1-mini --out hb-results.jsonl --report hb-report.html',
    'rubricate grade --input examples/items.jsonl --judge scripted --limit 2 --out smoke-results.jsonl   # a smoke run, offline',
  ]);
  command.action(async (_given: GradeFlags, self: Command) => {
    // A pack sets the input, the format and the defaults the user left unset, before anything reads them.
    await applyBenchmark(self, context.stderr);
    const flags = self.opts<GradeFlags>();
    if (flags.input === undefined) throw new RubricateError('CONFIG_INVALID', 'give the items to grade: --input FILE, or --benchmark NAME (`rubricate benchmarks` lists them)', { field: 'input' });
    context.exitCode = await runGrade(flags, runSpecOf(self), context, { outIsDefault: self.getOptionValueSource('out') === 'default', config: resolvedConfigOf(self, context.configFile) });
  });
}

/**
 * A grading run from flags: items in, results (and metrics, a report) out. `rejudge` grades the
 * lines of a results file again and writes each unchanged one back as it was (`rubricate rejudge`);
 * `outIsDefault`: `--out` was not given, so it may not replace another run's results.
 */
export async function runGrade(flags: GradeFlags, parsed: RunSpec, context: CommandContext, options: { rejudge?: boolean; outIsDefault?: boolean; /** `--config`: recorded on every results line. */ config?: ResolvedConfig; /** `rubricate eval`: the responses are sampled from the spec's model under test first. */ sample?: { credentials: Credentials } } = {}): Promise<number> {
  const run = await openGradeRun(await prepareGradeRun(flags, parsed, context, options));
  const graders = createGraders(run);
  const table = new ItemTable();
  let ended: GradeEnding;
  let recording: RunRecording | undefined;
  // One exit for every path: the session is closed here whatever happens (a completed run finishes it first).
  try {
    const canary = flags.canary ? await watchCanary(flags.canary, graders.grader.judgeInfo, context) : undefined;
    if (run.session.dryRun) return await printGradeDryRun(run, run.session.dryRun, graders);
    await refuseReplacingAnotherRun({
      out: flags.out,
      isDefault: options.outIsDefault === true,
      force: flags.force,
      thisRun: async () => ({ firstId: await firstRecordId(recordsOf(run, unreadImportOptions(run.importOptions), flags.shard)), judge: run.session.judges.length === 1 ? run.session.judge?.provenance.id : undefined }),
    });
    // The run history: a "running" line now, its ending when it ends (`rubricate view` lists it, live until then).
    recording = startRunRecording(runIndexPath(flags.runIndex), { results: flags.out, command: options.rejudge ? 'rejudge' : options.sample ? 'eval' : 'grade', judges: run.session.judges.map((member) => member.provenance.id), ...(run.sampling ? { models: [run.sampling.model.provenance.id] } : {}), input: flags.input, benchmark: flags.benchmark }, (message) => context.stderr(`warning: ${message}`));
    const outcome = await gradeIntoOut(run, graders, table);
    run.progress.stop();
    // Partial: no metrics or report written as if final; a --no-cache journal is kept for the rerun.
    if (outcome.interrupted) {
      recording?.end('interrupted', { items: itemCounts(outcome.metrics) });
      return reportInterrupted(context, outcome.written, await run.expectedTotal.catch(() => undefined));
    }
    ended = await finishGradeRun(run, graders, outcome);
    await canary?.afterRun(flags.out);
    recording?.end(ended.outcome.judgeUnusable ? 'failed' : 'finished', { items: itemCounts(ended.outcome.metrics), ...(ended.outcome.judgeUnusable ? { error: 'the judge is unusable: no call gave a verdict' } : {}) });
  } catch (error) {
    recording?.end(context.signal.aborted ? 'interrupted' : 'failed', { error: RubricateError.isInstance(error) ? `${error.code}: ${error.message}` : String(error) });
    if (context.signal.aborted) return reportInterrupted(context, undefined, undefined);
    throw error;
  } finally {
    run.progress.stop();
    // Responses still in flight (a stopped run) land and are stored before the store closes.
    await run.sampling?.sampler.settled();
    await run.session.close();
  }
  return printGradeEnding(run, graders, table, ended);
}

type GradeRunOptions = NonNullable<Parameters<typeof runGrade>[3]>;
type Prices = typeof defaultPrices;

/** What every step of one grading run reads, settled before its session opens. */
interface GradeRun {
  flags: GradeFlags;
  context: CommandContext;
  options: GradeRunOptions;
  importer: ReturnType<typeof getItemImporter>;
  /** The run spec with the format's scoring resolved (and, under eval, the guard's model under test). */
  spec: RunSpec;
  prices: Prices;
  repeats: number;
  importOptions: ImportOptions;
  /** Records the format skipped, counted by reason. */
  skipped: Map<string, number>;
  groupBy: string | undefined;
}

/** The run once its session is open: the judges, eval's model under test, and what watches and counts the records. */
interface OpenGradeRun extends GradeRun {
  session: RunSession;
  sampling: OpenSampling | undefined;
  inputReport: InputReport;
  /** With --shard: the whole input's record count, which every shard's lines carry for `merge`. */
  inputTotal: Promise<number> | undefined;
  /** The results this run is to write: the progress bar's total, the "N of M" of an interrupted run. */
  expectedTotal: Promise<number>;
  rejudging: Rejudging | undefined;
  forecast: LocalJudgeForecast | undefined;
  progress: ProgressReporter;
}

/** The run's graders: the first one's events drive the progress; with --repeats, the stability tally over all of them. */
interface GradeGraders {
  grader: Grader;
  stability: ReturnType<typeof createStabilityTally> | undefined;
  graded(admitted: AsyncIterable<ImportRecord>): AsyncIterable<ResultRecord>;
}

/** A completed run: its outcome (usage as spent), cost and who made its verdicts up, if anyone did. */
interface GradeEnding {
  outcome: GradeFileOutcome;
  cost: number | null;
  madeUp: string | undefined;
}

/** Refuses contradictory flags and unbounded counts before anything is read; returns the repeats. */
function checkGradeFlags(flags: GradeFlags, parsed: RunSpec): number {
  const repeats = flags.repeats ?? 1;
  // Before anything is made for them: each repeat is a grader and every item's calls again.
  checkRepeatCount(parsed.limits, '--repeats', repeats);
  if (flags.stabilityThreshold !== undefined && repeats < 2) throw new RubricateError('CONFIG_INVALID', '--stability-threshold reads the scores of several repeats: add --repeats N (N ≥ 2)', { field: 'stability-threshold' });
  // A shard cut short by --limit would be refused by merge as an interrupted one.
  if (flags.limit !== undefined && flags.shard) throw new RubricateError('CONFIG_INVALID', '--limit grades the first N records, --shard one part of all of them (merge needs every shard whole): give one of them', { field: 'limit' });
  if (repeats > 1 && flags.queue !== undefined) throw new RubricateError('CONFIG_INVALID', '--repeats grades in this process: leave out --queue, or run the repeats as separate queued runs', { field: 'repeats' });
  checkFiles({
    inputs: [{ flag: 'input', path: flags.input }, { flag: 'responses', path: flags.responses }, { flag: 'rubrics', path: flags.rubrics }, { flag: 'examples', path: flags.examples }, { flag: 'prices', path: flags.prices }],
    outputs: [{ flag: 'out', path: flags.out }, { flag: 'metrics', path: flags.metrics }, { flag: 'report', path: flags.report }],
    keep: storeFilesOf(flags),
  });
  return repeats;
}

/** The run's settings and import options; the input's rubrics linted and its --group-by field checked, all before any store, journal or output is opened. */
async function prepareGradeRun(flags: GradeFlags, parsed: RunSpec, context: CommandContext, options: GradeRunOptions): Promise<GradeRun> {
  const importer = getItemImporter(flags.format);
  refuseInapplicableFlags(flags, importer);
  const repeats = checkGradeFlags(flags, parsed);
  const prices = flags.prices ? loadPriceTable(flags.prices) : defaultPrices;
  // The format's own scoring when none is named: resolved here, so queue workers score alike.
  const spec: RunSpec = { ...parsed, scoring: { ...parsed.scoring, name: parsed.scoring.name ?? importer.defaultScoring ?? 'weighted_mean' }, guard: options.sample ? guardOfSampledRun(parsed) : parsed.guard };
  const skipped = new Map<string, number>();
  const importOptions: ImportOptions = {
    ...(await importOptionsFrom(flags, context)),
    judgeProtocol: spec.plan.protocol,
    // eval: the items' prompts and rubrics; their responses come from the model under test.
    ...(options.sample ? { withoutResponses: true } : {}),
    onSkipped: (reason) => void skipped.set(reason, (skipped.get(reason) ?? 0) + 1),
  };
  // Before any store, journal or output is opened: a rubric that cannot score is not paid for.
  if (flags.lint) await refuseOnLintErrors({ format: importer.name, input: flags.input, options: unreadImportOptions(importOptions) }, context, { quiet: flags.quiet });
  const groupBy = groupSettingsOf(spec.plan)?.groupBy;
  // A --group-by field no item has: refused before any store, journal or output is opened.
  if (groupBy !== undefined) await checkGroupField(firstRecords(importer.read(flags.input, unreadImportOptions(importOptions)), flags.limit), groupBy);
  return { flags, context, options, importer, spec, prices, repeats, importOptions, skipped, groupBy };
}

/** Import options for a look at the input before or beside the run: no warning or skip reported twice, no image read. */
function unreadImportOptions(importOptions: ImportOptions): ImportOptions {
  return { ...importOptions, onWarning: undefined, onSkipped: undefined, images: importOptions.images?.withReading('none') };
}

/** The records the run grades, as the run reads them (the format's own skips, the shard and --limit applied: a format that shards itself reads no other shard's images). */
function recordsOf(run: GradeRun, options: ImportOptions, shard: GradeFlags['shard']): AsyncIterable<ImportRecord> {
  const { importer, flags } = run;
  return firstRecords(importer.shards ? importer.read(flags.input, { ...options, shard }) : shardOf(importer.read(flags.input, options), shard), flags.limit);
}

/** The records as the grader takes them: with their responses sampled first under eval. */
function sampledRecords(run: OpenGradeRun, read: AsyncIterable<ImportRecord>): AsyncIterable<ImportRecord> {
  return run.sampling ? run.sampling.sampler.sampleRecords(read) : read;
}

/** The session (judges, store, batches) and, under eval, the model under test's sampling; then what reports and counts the run. */
async function openGradeRun(run: GradeRun): Promise<OpenGradeRun> {
  const { flags, context, options, spec } = run;
  const session = await openRunSession(spec, modelFromFlags(flags, 'judge').credentials, flags, { context, out: flags.out, queued: flags.queue !== undefined, recentReplies: batchRecentReplies });
  let sampling: OpenSampling | undefined;
  try {
    sampling = options.sample ? await openSampling(session, options.sample.credentials, flags, { context, stopSignal: context.signal, signal: drainSignal(context.signal, flags) }) : undefined;
  } catch (error) {
    await session.close();
    throw error;
  }
  const samplesPerItem = sampling ? (spec.sampling.samplesPerPrompt ?? 1) : 1;
  const forecast = localJudgeForecastOf(run, session.judge);
  const inputReport = new InputReport(context, { file: flags.input, format: run.importer.name, kind: 'items', responses: flags.responses });
  // A shard's lines carry the whole input's record count: what `merge` checks the shards against.
  const shard = flags.shard;
  const inputTotal = shard ? countRecordsOf(run, samplesPerItem) : undefined;
  const expectedTotal = inputTotal && shard ? inputTotal.then((total) => shardSize(total, shard)) : countRecordsOf(run, samplesPerItem);
  const rejudging = startRegrading(run);
  // A local judge's plan decides its speed, so the live bar names it beside the ETA; off a
  // terminal a local judge's long run still shows progress, as a line every few criteria.
  const progress = new ProgressReporter(ProgressReporter.displayFor(process.stderr, Boolean(flags.quiet), forecast !== undefined), forecast ? `grading (${forecast.progressLabel})` : undefined, {
    print: (line) => context.stderr(line),
  });
  expectedTotal.then(
    (total) => {
      progress.setTotal(total);
      forecast?.setTotal(total);
    },
    () => undefined,
  );
  return { ...run, session, sampling, inputReport, inputTotal, expectedTotal, rejudging, forecast, progress };
}

/** A local judge's plan and projections, printed as the run goes (none for a remote judge). */
function localJudgeForecastOf(run: GradeRun, judge: RunSession['judge']): LocalJudgeForecast | undefined {
  const { flags, context, spec } = run;
  if (!judge?.capabilities.embedded) return undefined;
  // --quiet: the plan and the first item's projection are progress talk, not printed.
  return new LocalJudgeForecast(flags.quiet ? () => undefined : (line) => context.stderr(line), {
    judgeId: judge.provenance.id,
    criteriaPerCall: spec.plan.criteriaPerCall === 'all' ? Number.POSITIVE_INFINITY : spec.plan.criteriaPerCall,
    explanation: gradingModes.get(gradingModeOf(spec.plan)).defaults(spec.plan, judge).explanation ?? 'full',
    verdict: spec.plan.verdict ?? 'binary',
    threads: judge.capabilities.threads,
    sequences: judge.capabilities.maxConcurrency,
  });
}

/** The results the run will write: the records counted (reading no image: an item naming one is still one record), --limit applied, times the samples per prompt. */
function countRecordsOf(run: GradeRun, samplesPerItem: number): Promise<number> {
  const { flags, importer, importOptions } = run;
  return countInputRecords({
    format: importer.name,
    input: flags.input,
    responses: flags.responses,
    shard: undefined,
    // The whole input, whatever shard this run grades: the total `merge` checks the shards against.
    read: () => recordsOf(run, unreadImportOptions(importOptions), undefined),
  }).then((total) => (flags.limit === undefined ? total : Math.min(total, flags.limit)) * samplesPerItem);
}

/**
 * Re-judging pairs each item with the line it came from, to write an unchanged one back as it was.
 * So does grading a results file: a line whose verdicts come back unchanged from the store keeps
 * the usage its verdicts cost when they were made (same judge and cache: the same bytes). Not
 * through a queue or with repeats, which write lines of their own.
 */
function startRegrading(run: GradeRun): Rejudging | undefined {
  const { flags, options, importer, repeats, importOptions } = run;
  const regrading = options.rejudge === true || (importer.name === 'results' && flags.queue === undefined && repeats === 1);
  return regrading ? startRejudging(firstRecords(shardOf(readResultsAsItems(flags.input, importOptions), flags.shard), flags.limit)) : undefined;
}

/** The grader whose events drive the progress, and with --repeats the quiet graders of repeats 1 … N − 1 (their calls show in the run's usage, not its progress). */
function createGraders(run: OpenGradeRun): GradeGraders {
  const { session, context, flags, repeats, progress, forecast } = run;
  const grader = new Grader({
    ...session.graderOptions(),
    onEvent: fanOut(progress.onEvent, forecast?.onEvent),
    // Stop: no new item and no new call; in-flight calls get --drain-timeout to land, then are cancelled.
    stopSignal: context.signal,
    signal: drainSignal(context.signal, flags),
  });
  const repeatGraders = Array.from({ length: repeats - 1 }, (_, index) => new Grader({ ...session.graderOptions(), repeat: index + 1, stopSignal: context.signal, signal: drainSignal(context.signal, flags) }));
  const stability = repeats > 1 ? createStabilityTally(repeats, flags.stabilityThreshold) : undefined;
  const graded = (admitted: AsyncIterable<ImportRecord>) => (stability ? tallied(gradeRepeatedly([grader, ...repeatGraders], admitted), stability) : grader.gradeStream(admitted));
  return { grader, stability, graded };
}

/** --dry-run: every call counted (none sent), the estimate printed. */
async function printGradeDryRun(run: OpenGradeRun, dryRun: NonNullable<RunSession['dryRun']>, graders: GradeGraders): Promise<number> {
  const { context, session, sampling, prices, flags, importOptions } = run;
  const usage = await dryRunUsage(graders.graded(sampledRecords(run, recordsOf(run, importOptions, flags.shard))));
  run.progress.stop();
  const images = importOptions.images;
  printDryRun(context, dryRun, usage, session.judge?.provenance.model, prices, {
    batch: Boolean(flags.batch),
    cascade: session.cascadeJudges as DryRunJudge[],
    ...(images ? { images: { files_read: images.files, urls_not_fetched: images.urls } } : {}),
    ...(sampling ? { sampling: sampling.estimate(prices) } : {}),
  });
  return exitCodes.success;
}

/** The records graded into --out: here, by queue workers, or re-judged with unchanged lines written back as they were. */
async function gradeIntoOut(run: OpenGradeRun, graders: GradeGraders, table: ItemTable): Promise<GradeFileOutcome> {
  const { flags, context, options, rejudging, groupBy, inputReport, inputTotal } = run;
  const { grader } = graders;
  const queueUrl = flags.queue;
  const stamp = flags.shard && inputTotal ? await shardStampFor(flags, run.importer.name, flags.shard, await inputTotal) : undefined;
  const queued = queueUrl ? (admitted: AsyncIterable<ImportRecord>) => gradeThroughQueueOf(run, queueUrl, admitted) : undefined;
  const read = rejudging?.records ?? sampledRecords(run, recordsOf(run, run.importOptions, flags.shard));
  return gradeFile({
    grader,
    // Items without the --group-by field: invalid lines naming the input file (the grader would name only the line).
    records: inputReport.watch(groupBy === undefined ? read : withGroupField(read, groupBy, flags.input)),
    results: (admitted) => table.tap(withResolvedConfig(withShardStamp(rejudging ? rejudging.keepUnchanged(grader.gradeStream(admitted)) : queued ? queued(admitted) : graders.graded(admitted), stamp), options.config)),
    out: flags.out,
    strict: flags.strict,
    onInvalid: (error) => inputReport.invalid(error),
    stopSignal: context.signal,
  });
}

/** The records graded by queue workers; progress and usage of every worker arrive with their results. */
async function* gradeThroughQueueOf(run: OpenGradeRun, url: string, records: AsyncIterable<ImportRecord>): AsyncGenerator<ResultRecord> {
  const { flags, context } = run;
  // BullMQ loads only for a queued run: it is most of a plain run's start-up otherwise.
  const { gradeThroughQueue } = await import('../../queue/grading-queue.js');
  // The spec travels whole: workers validate it with the same schema and add their own key and store.
  const chunks = gradeThroughQueue(records, {
    url,
    spec: run.spec,
    chunkSize: flags.chunkSize,
    // First Ctrl-C: no new chunk, unclaimed ones taken back; chunks being graded get --drain-timeout to land.
    signal: context.signal,
    cancelSignal: drainSignal(context.signal, flags),
    reconnectWindowMs: flags.queueTimeout * 1000,
    onNotice: (message) => context.stderr(`queue: ${message}`),
  });
  for await (const result of chunks) {
    run.progress.onEvent({ type: 'item', status: result.status });
    yield result;
  }
}

/** A completed run: what it spent and cost, the metrics file and the report written, the session's batches delivered. */
async function finishGradeRun(run: OpenGradeRun, graders: GradeGraders, graded: GradeFileOutcome): Promise<GradeEnding> {
  const { flags, session, rejudging, prices } = run;
  const { grader } = graders;
  const judge = session.judge;
  // What this run spent: a re-judged line written back as it was keeps the usage of its first run.
  const outcome = rejudging ? { ...graded, usage: rejudging.tally.spent } : graded;
  // A jury of different models would need per-model usage for a cost: report none rather than a wrong one.
  const oneModel = session.judges.every((member) => member.provenance.model === judge?.provenance.model);
  let cost = !judge ? 0 : oneModel ? costOf(outcome.usage, priceFor(judge.provenance.model, prices)) : null;
  // A scripted judge says so by name; a fake-judge endpoint only through its lines' explanations.
  const madeUp = madeUpBy(grader.judgeInfo) ?? outcome.madeUpBy;
  if (madeUp !== undefined) cost = 0;
  const summary = metricsSummary(run, graders, { outcome, cost, madeUp });
  if (flags.metrics) await writeFileAtomic(flags.metrics, `${JSON.stringify(summary, null, 2)}\n`);
  if (flags.report) {
    const { writeReportFromResults } = await import('../../report/index.js');
    await writeReportFromResults({ input: flags.out, out: flags.report });
  }
  session.finish();
  return { outcome, cost, madeUp };
}

/** The --metrics document: the scoring's metrics, usage and cost, and what the run's options add (re-judging, stability, sampling, jury, cascade, guard, skips). */
function metricsSummary(run: OpenGradeRun, { grader, stability }: GradeGraders, { outcome, cost, madeUp }: GradeEnding): Record<string, unknown> {
  const { rejudging, options, sampling, prices, skipped } = run;
  return {
    ...madeUpFields(madeUp),
    ...outcome.metrics,
    usage: { ...outcome.usage, cost_usd: cost },
    ...(rejudging && options.rejudge ? { rejudged: { kept: rejudging.tally.kept, changed: rejudging.tally.changed } } : {}),
    ...(stability ? { stability: stability.summary() } : {}),
    ...(sampling ? { sampling: sampling.summary(prices) } : {}),
    judge: grader.judgeInfo ?? null,
    ...(grader.agreement ? { jury: grader.agreement.summary() } : {}),
    ...(grader.cascadeTally ? { cascade: grader.cascadeTally.summary() } : {}),
    ...(grader.selfPreference && grader.selfPreference.counts.flagged > 0 ? { self_preference: grader.selfPreference.counts } : {}),
    ...(skipped.size > 0 ? { skipped: [...skipped].map(([reason, count]) => ({ count, reason })) } : {}),
  };
}

/** The closing lines on stderr (with --quiet only what went wrong) and the exit code. */
function printGradeEnding(run: OpenGradeRun, { grader, stability }: GradeGraders, table: ItemTable, { outcome, cost, madeUp }: GradeEnding): number {
  const { flags, context, spec, inputReport, sampling, rejudging, options, prices, skipped } = run;
  const { metrics, usage, invalid: invalidSeen } = outcome;
  inputReport.finish();
  // --quiet: what went wrong still prints (errors, warnings), the summaries do not.
  if (flags.quiet) printRunProblems(context, metrics, { usage, errors: outcome.errors });
  else {
    if (showItemTable(flags, table.items, Boolean(process.stderr.isTTY))) context.stderr(table.render());
    printMetricsSummary(context, metrics, { usage, cost, out: flags.out, checkMode: spec.scoring.checkMode ?? 'strict', errors: outcome.errors, sideFileLines: inputReport.sideFileLines, mode: spec.plan.mode, madeUpBy: madeUp });
    if (sampling) describeSampling(context, sampling.summary(prices));
    if (rejudging && options.rejudge) context.stderr(`re-judged: ${rejudging.tally.changed} line(s) changed, ${rejudging.tally.kept} unchanged (written back as they were)`);
    if (stability) context.stderr(describeStability(stability.summary()));
  }
  reportFailedAsZero(context, metrics);
  for (const [reason, count] of skipped) context.stderr(`warning: skipped ${count} record(s): ${reason}`);
  reportCascadeAndGuard(context, grader, Boolean(flags.quiet));
  if (grader.agreement && !flags.quiet) {
    const jury = grader.agreement.summary() as { fleiss_kappa: number | null; criteria_rated: number; disagreements: number };
    context.stderr(`jury: Fleiss' κ ${jury.fleiss_kappa === null ? 'n/a' : jury.fleiss_kappa.toFixed(3)} over ${jury.criteria_rated} criteria, ${jury.disagreements} with disagreeing votes`);
  }
  if (outcome.judgeUnusable) {
    context.stderr(`the judge is unusable: no call gave a verdict (${outcome.errors.map((entry) => `${entry.code} ×${entry.count}`).join(', ')}); check the judge settings and rerun the same command`);
    return exitCodes.judgeUnavailable;
  }
  if (inputReport.responsesMatchedNothing) return exitCodes.usage;
  if (flags.strict && invalidSeen > 0) return exitCodes.itemsFailed;
  return metrics.n_error + metrics.n_invalid > 0 ? exitCodes.itemsFailed : exitCodes.success;
}

/** A run's item counts, as its history line keeps them. */
function itemCounts(metrics: Metrics): { n: number; ok: number; error: number; invalid: number } {
  return { n: metrics.n, ok: metrics.n_ok, error: metrics.n_error, invalid: metrics.n_invalid };
}

/** The run's cascade decisions (not with --quiet) and self-preference warnings, one line each on stderr. */
function reportCascadeAndGuard(context: CommandContext, grader: Grader, quiet: boolean): void {
  if (grader.cascadeTally && !quiet) {
    const { decided_by: decidedBy, escalated_from: escalatedFrom } = grader.cascadeTally.summary();
    const escalations = Object.entries(escalatedFrom).map(([judge, reasons]) => `${judge} escalated ${Object.entries(reasons).map(([reason, count]) => `${count} (${reason})`).join(', ')}`);
    context.stderr(`cascade: decided ${Object.entries(decidedBy).map(([judge, count]) => `${count} by ${judge}`).join(', ') || 'nothing'}${escalations.length > 0 ? `; ${escalations.join('; ')}` : '; nothing escalated'}`);
  }
  const guard = grader.selfPreference?.counts;
  if (guard && guard.flagged > 0) {
    context.stderr(`warning: self-preference: ${guard.flagged} item(s) were answered by the judge's own model or family${guard.refused > 0 ? `; ${guard.refused} not graded (--self-preference refuse)` : ' (recorded as self_preference on their lines; --self-preference refuse grades none of them)'}`);
  }
}

/** eval: the self-preference guard knows the model under test (`--model openai:gpt-4.1` → `gpt-4.1`) unless told otherwise; made-up responses have no model. */
function guardOfSampledRun(spec: RunSpec): RunSpec['guard'] {
  const model = spec.models[0]?.model;
  if (spec.guard.modelUnderTest !== undefined || model === undefined || isScriptedSpec(model)) return spec.guard;
  return { ...spec.guard, modelUnderTest: model.replace(/^[a-z]+:/, '') };
}

/** The model under test's part of the run, one line on stderr. */
function describeSampling(context: CommandContext, summary: Record<string, unknown>): void {
  const usage = summary.usage as { calls: number; cache_hits: number; prompt_tokens: number; completion_tokens: number; cost_usd: number | null };
  const cost = usage.cost_usd === null ? 'cost n/a (no price for this model)' : `$${usage.cost_usd.toFixed(4)}`;
  context.stderr(`model under test ${String(summary.model)}: ${usage.calls} call(s), ${usage.cache_hits} from the cache, ${usage.prompt_tokens} input and ${usage.completion_tokens} output tokens, ${cost}`);
}

/** The results as they pass, each graded item added to the stability tally. */
async function* tallied(results: AsyncIterable<ResultRecord>, tally: ReturnType<typeof createStabilityTally>): AsyncGenerator<ResultRecord> {
  for await (const result of results) {
    if (result.status !== 'invalid') tally.add(result);
    yield result;
  }
}

function describeStability(summary: StabilitySummary): string {
  const figure = (value: number | null) => (value === null ? 'n/a' : value.toFixed(4));
  const { verdicts, items, threshold, corpus_mean: corpus } = summary;
  return [
    `stability over ${summary.repeats} repeats: verdict flip rate ${figure(verdicts.flip_rate)} over ${verdicts.pairs} verdicts (${figure(verdicts.unstable)} not the same in every repeat)`,
    `  item score range: mean ${figure(items.score_range.mean)}, max ${figure(items.score_range.max)} over ${items.scored} items; corpus mean by repeat ${corpus.by_repeat.map((value) => value.toFixed(4)).join(', ') || 'n/a'} (range ${figure(corpus.range)})`,
    ...(threshold ? [`  ${threshold.crossing} item(s) on both sides of ${threshold.value} across repeats${threshold.examples.length > 0 ? `: ${threshold.examples.slice(0, 10).join(', ')}${threshold.crossing > 10 ? ', …' : ''}` : ''}`] : []),
  ].join('\n');
}
