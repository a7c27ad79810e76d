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
import { getItemImporter, itemImporters } from '../../rubric/formats/index.js';
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
import { openRunSession, type SessionFlags } from '../session.js';
import { batchRecentReplies } from '../../store/index.js';
import { checkRepeatCount, type RunSpec } from '../../spec/run-spec.js';
import type { ImportOptions } from '../../rubric/formats/types.js';
import { readResultsAsItems } from '../../rubric/formats/results.js';
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
    .option('--table', `print a table of the items after the run: id, score, criteria met/total, errors, made-up verdicts labelled (shown by itself on a terminal for ${autoTableItems} items or fewer)`)
    .option('--no-table', 'never print the item table')
    .option('--run-index <file>', `the run history this run adds its lines to (default: ${runIndexVariable}, else the user's state folder; "off" for none)`)
    .option('--quiet', quietHelp);
  addJudgeOptions(command, ['plan', 'alignment', 'calibration', 'batching', 'sampling', 'protocol', 'template', 'calls', 'jury', 'cascade', 'guard', 'scoring', 'fleet', 'text', 'requests', 'limits']);
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
    applyBenchmark(self);
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
  const importer = getItemImporter(flags.format);
  refuseInapplicableFlags(flags, importer);
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
  if (flags.lint) await refuseOnLintErrors({ format: importer.name, input: flags.input, options: { ...importOptions, onWarning: undefined, onSkipped: undefined, images: importOptions.images?.withReading('none') } }, context, { quiet: flags.quiet });
  const groupBy = groupSettingsOf(spec.plan)?.groupBy;
  // A --group-by field no item has: refused before any store, journal or output is opened.
  if (groupBy !== undefined) await checkGroupField(firstRecords(importer.read(flags.input, { ...importOptions, onWarning: undefined, onSkipped: undefined, images: importOptions.images?.withReading('none') }), flags.limit), groupBy);
  const session = await openRunSession(spec, modelFromFlags(flags, 'judge').credentials, flags, { context, out: flags.out, queued: flags.queue !== undefined, recentReplies: batchRecentReplies });
  let sampling: OpenSampling | undefined;
  try {
    sampling = options.sample ? await openSampling(session, options.sample.credentials, flags, { context, stopSignal: context.signal, signal: drainSignal(context.signal, flags) }) : undefined;
  } catch (error) {
    await session.close();
    throw error;
  }
  /** The records as the grader takes them: with their responses sampled first under eval. */
  const sampled = (read: AsyncIterable<ImportRecord>) => (sampling ? sampling.sampler.sampleRecords(read) : read);
  const samplesPerItem = sampling ? (spec.sampling.samplesPerPrompt ?? 1) : 1;
  const judge = session.judge;
  const forecast =
    judge?.capabilities.embedded
      ? // --quiet: the plan and the first item's projection are progress talk, not printed.
        new LocalJudgeForecast(flags.quiet ? () => undefined : (line) => context.stderr(line), {
          judgeId: judge.provenance.id,
          criteriaPerCall: spec.plan.criteriaPerCall === 'all' ? Number.POSITIVE_INFINITY : spec.plan.criteriaPerCall,
          explanation: gradingModes.get(gradingModeOf(spec.plan)).defaults(spec.plan, judge).explanation ?? 'full',
          verdict: spec.plan.verdict ?? 'binary',
          threads: 'threads' in judge && typeof judge.threads === 'number' ? judge.threads : undefined,
        })
      : undefined;
  /** The records the run grades, as the run reads them (the format's own skips, the shard and --limit applied: a format that shards itself reads no other shard's images). */
  const records = (options: typeof importOptions, shard = flags.shard) => firstRecords(importer.shards ? importer.read(flags.input, { ...options, shard }) : shardOf(importer.read(flags.input, options), shard), flags.limit);
  const inputReport = new InputReport(context, { file: flags.input, format: importer.name, kind: 'items', responses: flags.responses });
  const countOf = (shard: typeof flags.shard) =>
    countInputRecords({
      format: importer.name,
      input: flags.input,
      responses: flags.responses,
      shard,
      // Counting reads no image: an item naming one is still one record.
      read: () => records({ ...importOptions, onWarning: undefined, onSkipped: undefined, images: importOptions.images?.withReading('none') }, shard),
    }).then((total) => (flags.limit === undefined ? total : Math.min(total, flags.limit)) * samplesPerItem);
  // A shard's lines carry the whole input's record count: what `merge` checks the shards against.
  const shard = flags.shard;
  const inputTotal = shard ? countOf(undefined) : undefined;
  const expectedTotal = inputTotal && shard ? inputTotal.then((total) => shardSize(total, shard)) : countOf(undefined);
  // Re-judging pairs each item with the line it came from, to write an unchanged one back as it was.
  // So does grading a results file: a line whose verdicts come back unchanged from the store keeps
  // the usage its verdicts cost when they were made (same judge and cache: the same bytes). Not
  // through a queue or with repeats, which write lines of their own.
  const regrading = options.rejudge === true || (importer.name === 'results' && flags.queue === undefined && repeats === 1);
  const rejudging: Rejudging | undefined = regrading ? startRejudging(firstRecords(shardOf(readResultsAsItems(flags.input, importOptions), flags.shard), flags.limit)) : undefined;
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
  const grader = new Grader({
    ...session.graderOptions(),
    onEvent: fanOut(progress.onEvent, forecast?.onEvent),
    // Stop: no new item and no new call; in-flight calls get --drain-timeout to land, then are cancelled.
    stopSignal: context.signal,
    signal: drainSignal(context.signal, flags),
  });
  // Repeats 1 … N − 1: quiet graders of their own (their calls show in the run's usage, not its progress).
  const repeatGraders = Array.from({ length: repeats - 1 }, (_, index) => new Grader({ ...session.graderOptions(), repeat: index + 1, stopSignal: context.signal, signal: drainSignal(context.signal, flags) }));
  const stability = repeats > 1 ? createStabilityTally(repeats, flags.stabilityThreshold) : undefined;
  const graded = (admitted: AsyncIterable<ImportRecord>) => (repeats > 1 ? tallied(gradeRepeatedly([grader, ...repeatGraders], admitted), stability!) : grader.gradeStream(admitted));
  const table = new ItemTable();
  let outcome: GradeFileOutcome;
  let cost: number | null;
  let recording: RunRecording | undefined;
  let madeUp: string | undefined;
  // One exit for every path: the session is closed here whatever happens (a completed run finishes it first).
  try {
    if (!session.dryRun) {
      await refuseReplacingAnotherRun({
        out: flags.out,
        isDefault: options.outIsDefault === true,
        force: flags.force,
        thisRun: async () => ({ firstId: await firstRecordId(records({ ...importOptions, onWarning: undefined, onSkipped: undefined, images: importOptions.images?.withReading('none') })), judge: session.judges.length === 1 ? judge?.provenance.id : undefined }),
      });
    }
    if (session.dryRun) {
      const usage = await dryRunUsage(graded(sampled(records(importOptions))));
      progress.stop();
      const images = importOptions.images;
      printDryRun(context, session.dryRun, usage, judge?.provenance.model, prices, {
        batch: Boolean(flags.batch),
        cascade: session.cascadeJudges as DryRunJudge[],
        ...(images ? { images: { files_read: images.files, urls_not_fetched: images.urls } } : {}),
        ...(sampling ? { sampling: sampling.estimate(prices) } : {}),
      });
      return exitCodes.success;
    }
    // The run history: a "running" line now, its ending when it ends (`rubricate view` lists it, live until then).
    recording = startRunRecording(runIndexPath(flags.runIndex), { results: flags.out, command: options.rejudge ? 'rejudge' : 'grade', judges: session.judges.map((member) => member.provenance.id), input: flags.input, benchmark: flags.benchmark }, (message) => context.stderr(`warning: ${message}`));
    const queueUrl = flags.queue;
    const stamp = shard && inputTotal ? await shardStampFor(flags, importer.name, shard, await inputTotal) : undefined;
    const queued = queueUrl
      ? async function* (records: AsyncIterable<ImportRecord>) {
          // BullMQ loads only for a queued run: it is most of a plain run's start-up otherwise.
          const { gradeThroughQueue } = await import('../../queue/grading-queue.js');
          // The spec travels whole: workers validate it with the same schema and add their own key and store.
          const chunks = gradeThroughQueue(records, {
            url: queueUrl,
            spec,
            chunkSize: flags.chunkSize,
            // First Ctrl-C: no new chunk, unclaimed ones taken back; chunks being graded get --drain-timeout to land.
            signal: context.signal,
            cancelSignal: drainSignal(context.signal, flags),
            reconnectWindowMs: flags.queueTimeout * 1000,
            onNotice: (message) => context.stderr(`queue: ${message}`),
          });
          for await (const result of chunks) {
            // Progress and usage of every worker arrive with their results.
            progress.onEvent({ type: 'item', status: result.status });
            yield result;
          }
        }
      : undefined;
    outcome = await gradeFile({
      grader,
      // Items without the --group-by field: invalid lines naming the input file (the grader would name only the line).
      records: inputReport.watch(groupBy === undefined ? (rejudging?.records ?? sampled(records(importOptions))) : withGroupField(rejudging?.records ?? sampled(records(importOptions)), groupBy, flags.input)),
      results: (admitted) => table.tap(withResolvedConfig(withShardStamp(rejudging ? rejudging.keepUnchanged(grader.gradeStream(admitted)) : queued ? queued(admitted) : graded(admitted), stamp), options.config)),
      out: flags.out,
      strict: flags.strict,
      onInvalid: (error) => inputReport.invalid(error),
      stopSignal: context.signal,
    });
    progress.stop();
    // Partial: no metrics or report written as if final; a --no-cache journal is kept for the rerun.
    if (outcome.interrupted) {
      recording?.end('interrupted', { items: itemCounts(outcome.metrics) });
      return reportInterrupted(context, outcome.written, await expectedTotal.catch(() => undefined));
    }
    // What this run spent: a re-judged line written back as it was keeps the usage of its first run.
    if (rejudging) outcome = { ...outcome, usage: rejudging.tally.spent };
    // A jury of different models would need per-model usage for a cost: report none rather than a wrong one.
    const oneModel = session.judges.every((member) => member.provenance.model === judge?.provenance.model);
    cost = !judge ? 0 : oneModel ? costOf(outcome.usage, priceFor(judge.provenance.model, prices)) : null;
    // A scripted judge says so by name; a fake-judge endpoint only through its lines' explanations.
    madeUp = madeUpBy(grader.judgeInfo) ?? outcome.madeUpBy;
    if (madeUp !== undefined) cost = 0;
    const summary = {
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
    if (flags.metrics) await writeFileAtomic(flags.metrics, `${JSON.stringify(summary, null, 2)}\n`);
    if (flags.report) {
      const { writeReportFromResults } = await import('../../report/index.js');
      await writeReportFromResults({ input: flags.out, out: flags.report });
    }
    session.finish();
    recording?.end(outcome.judgeUnusable ? 'failed' : 'finished', { items: itemCounts(outcome.metrics), ...(outcome.judgeUnusable ? { error: 'the judge is unusable: no call gave a verdict' } : {}) });
  } catch (error) {
    recording?.end(context.signal.aborted ? 'interrupted' : 'failed', { error: RubricateError.isInstance(error) ? `${error.code}: ${error.message}` : String(error) });
    if (context.signal.aborted) return reportInterrupted(context, undefined, undefined);
    throw error;
  } finally {
    progress.stop();
    // Responses still in flight (a stopped run) land and are stored before the store closes.
    await sampling?.sampler.settled();
    await session.close();
  }
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
