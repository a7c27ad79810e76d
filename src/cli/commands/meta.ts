/**
 * `rubricate meta`: can this judge be trusted? Three ways in, chosen by --format and --judge:
 *
 * - published judge outputs (`--format llmbar|judgebench`, no --judge): re-scored without
 *   calling anything;
 * - a results file against human labels (`--format results --labels FILE`): binary agreement
 *   per criterion, tag and response source;
 * - a labelled pairwise set with --judge (`--format llmbar|judgebench|pandalm|autoj|hhh`): the
 *   judge compares every pair in both orders, then the verdicts are scored against the labels;
 * - recorded graded judges against human labels, nothing called (`--format llmjudge --labels
 *   QRELS`: a TREC-style graded run; `--format llm-rubric`: LLM-Rubric's answer distributions);
 * - a best-of-N benchmark (`--format rewardbench2|rm-bench`): with --judge, the judge rates each
 *   response (or ranks four at once) and the benchmark's own aggregation scores it; without,
 *   the length-only baselines alone. Pairwise and best-of-N reports carry both baselines.
 */
import { Option, type Command } from 'commander';
import { Comparer } from '../../pipeline/compare.js';
import { RubricateError, exitCodes, type SerializedError } from '../../errors.js';
import type { EngineEvent } from '../../engine/engine.js';
import type { ReplyStore } from '../../store/index.js';
import type { Judge } from '../../judges/types.js';
import { formatMetaTable, scorePublishedJudge, type BinaryMetaReport, type PublishedFormat } from '../../meta/index.js';
import { metaFromResults } from '../../meta/results-meta.js';
import { loadLabels, restrictLabels } from '../../meta/labels.js';
import { readHeldOutItems } from '../../spec/alignment.js';
import { formatOutcomeReport, outcomeMeta } from '../../meta/outcome.js';
import { loadTernaryLabels, researchRubricsMeta, researchRubricsTasks } from '../../meta/researchrubrics.js';
import { runPairwiseMeta, type JudgePairs } from '../../meta/pairwise-run.js';
import { formatLlmJudgeReport, llmJudgeMeta } from '../../meta/llmjudge.js';
import { formatLlmRubricBaselines, llmRubricBaselines } from '../../meta/llm-rubric.js';
import { bestOfNImporters, getPairwiseImporter, pairwiseImporters } from '../../formats/index.js';
import { lengthBaselines, runBestOfNMeta, type BestOfNBenchmark, type BestOfNJudging } from '../../meta/best-of-n.js';
import { Grader } from '../../pipeline/grader.js';
import type { GradingStrategy } from '../../grading/types.js';
import { gradingModes, unreadPlanSettings } from '../../pipeline/grading-modes.js';
import { withDefaultSampling } from '../../pipeline/defaults.js';
import { quietHelp, reportInputError, type CommandContext } from '../context.js';
import { organizeHelp } from '../help.js';
import { addJudgeOptions, parseNumber } from '../judge-options.js';
import { modelFromFlags, runFlagOf, runSpecOf } from '../run-spec-flags.js';
import { openRunSession, type SessionFlags } from '../session.js';
import { recordedJudges } from '../recorded-judge.js';
import type { RunSpec } from '../../spec/run-spec.js';
import { storeFilesOf } from '../store-options.js';
import { checkFiles, writeFileAtomic } from '../../util/files.js';
import { madeUpBy, madeUpFields, madeUpNotice } from '../../util/made-up.js';
import { formatGradedRows, llmRubricGradedRows, writeLlmRubricReplay } from '../../meta/llm-rubric-replay.js';

interface MetaFlags extends SessionFlags {
  judge?: string[];
  format: string;
  input: string;
  out: string;
  report?: string;
  labels?: string;
  groupBy?: string;
  sourceField?: string;
  includeChecks?: boolean;
  heldOut?: string;
  outcomeField?: string;
  bootstrapResamples: number;
  bootstrapSeed: number;
  confidence: number;
  judging: BestOfNJudging;
  writeReplay?: string;
  writeItems?: string;
  results?: string;
  quiet?: boolean;
}

/** What a pair judge gets from the command: the judge (or jury), the reply cache and the run spec. */
export interface PairJudgeSetup {
  /** The first judge named; `judges` holds every one when --judge is repeated (a jury). */
  judge: Judge;
  judges: Judge[];
  store: ReplyStore | undefined;
  spec: RunSpec;
  signal: AbortSignal;
  onEvent?: (event: EngineEvent) => void;
}

export interface MetaCommandDependencies {
  /** Builds the function that judges pairs in both orders (the `compare` strategy). */
  createJudgePairs(setup: PairJudgeSetup): JudgePairs;
}

/** Pairs are judged by the `compare` pipeline: both orders, verdicts mapped back to A/B. */
export const defaultMetaDependencies: MetaCommandDependencies = {
  createJudgePairs({ judge, judges, store, spec, signal, onEvent }) {
    if (judges.length > 1) throw new RubricateError('CONFIG_INVALID', 'pairwise meta-evaluation takes one judge', { field: 'judge' });
    const comparer = new Comparer({
      judge,
      store,
      plan: { ...(spec.plan.sampling ? { sampling: spec.plan.sampling } : {}), ...(spec.plan.protocol ? { protocol: spec.plan.protocol } : {}), ...(spec.plan.alignment ? { alignment: spec.plan.alignment } : {}) },
      calls: spec.calls,
      omitText: true,
      onEvent,
      signal,
    });
    return async function* judgePairs(pairs) {
      const records = comparer.compareStream(
        (async function* () {
          for (const [index, pair] of pairs.entries()) yield { kind: 'pair' as const, pair, line: index + 1 };
        })(),
      );
      for await (const record of records) {
        yield {
          id: record.id,
          original: record.orders.ab ?? 'invalid',
          swapped: record.orders.ba ?? 'invalid',
          ...(record.error ? { errors: [record.error] } : {}),
        };
      }
    };
  },
};

const publishedFormats: readonly PublishedFormat[] = ['llmbar', 'judgebench'];

export function parseConfidence(value: string): number {
  const number = Number(value);
  if (!(number > 0 && number < 1)) throw new RubricateError('CONFIG_INVALID', `--confidence must be between 0 and 1, got "${value}"`, { field: 'confidence' });
  return number;
}

export function parseResamples(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0) throw new RubricateError('CONFIG_INVALID', `--bootstrap-resamples must be a non-negative integer, got "${value}"`, { field: 'bootstrap-resamples' });
  return number;
}

export function registerMetaCommand(program: Command, context: CommandContext, dependencies: MetaCommandDependencies = defaultMetaDependencies): void {
  const command = program
    .command('meta')
    .description('how far a judge agrees with human or gold labels: published judge outputs, a results file against labels, or a judge run on a labelled pairwise set')
    .requiredOption('--format <name>', `results | outcome (results whose items carry an outcome, e.g. τ-bench rewards) | researchrubrics (results with ternary labels) | llmjudge (a TREC graded run against --labels qrels) | llm-rubric (LLM-Rubric's folder: answer distributions against human answers) | llmbar | judgebench (published outputs, or datasets with --judge) | ${pairwiseImporters.names().filter((name) => !publishedFormats.includes(name as PublishedFormat)).join(' | ')} (with --judge)`)
    .requiredOption('--input <file>', 'published judge output, results JSONL, pairwise dataset, a TREC graded run (llmjudge) or the LLM-Rubric folder (llm-rubric)')
    .requiredOption('--out <file>', 'report JSON')
    .option('--report <file>', 'also write the HTML report of it (as `rubricate report` does)')
    .option('--labels <file>', 'results: human labels JSONL ({id, criterion_id, label} or {id, labels: {criterion_id: label}}; a label may be a list, one per rater); llmjudge: the qrels (qid 0 docid label)')
    .option('--group-by <list>', 'results: comma-separated breakdowns: criterion, tag, or tag prefixes such as axis,theme')
    .option('--source-field <path>', 'results: dot path naming each response\u2019s source (e.g. metadata.model), for the bias index')
    .option('--include-checks', 'results: also compare deterministic checks with the labels')
    .option('--held-out <alignment>', 'results: only the items this alignment file held out for testing, so an aligned judge is scored on items it never learnt from')
    .option('--outcome-field <path>', 'outcome: dot path of each result\u2019s outcome (1 success, 0 failure)', 'metadata.outcome_reward')
    .option('--bootstrap-resamples <n>', 'bootstrap resamples for confidence intervals (0 = none)', parseResamples, 1000)
    .option('--bootstrap-seed <n>', 'bootstrap seed', parseNumber('bootstrap-seed'), 0)
    .option('--confidence <level>', 'confidence level of the intervals', parseConfidence, 0.95)
    .addOption(new Option('--judging <how>', `${bestOfNImporters.names().join(' | ')}: rate each response 1–10 (ratings, default) or, on rewardbench2, rank four at once (rank-four)`).choices(['ratings', 'rank-four']).default('ratings'))
    .option('--write-replay <file>', 'llm-rubric: also write the judge\u2019s recorded answer distributions as a replay file (grade --judge replay:FILE), with --write-items')
    .option('--write-items <file>', 'llm-rubric: the real set\u2019s dialogues as items, one ordinal criterion per question, to grade with that replay file')
    .option('--results <file>', 'llm-rubric: results graded on those items (e.g. with --judge replay:FILE): the argmax and expected rows rebuilt from their verdicts, beside the recorded ones')
    .option('--quiet', quietHelp);
  // Pairs are judged as compare judges them (sampling, protocol, calls; one judge); best-of-N ratings read the plan's verdict too.
  addJudgeOptions(command, ['plan', 'sampling', 'protocol', 'template', 'calls']);
  organizeHelp(command, [
    'rubricate meta --format llmbar --input examples/llmbar/dataset.json --judge openai:gpt-4.1-mini --out meta.json',
    'rubricate meta --format results --input hb-results.jsonl --labels labels.jsonl --out meta.json',
  ]);
  command.action(async (flags: MetaFlags, self: Command) => {
    context.exitCode = await runMeta(flags, runSpecOf(self), context, dependencies);
  });
}

/** Rows per breakdown in the table; the JSON report keeps every group. */
const tableGroupRows = 25;

/** The report as the table shows it: large breakdowns cut to their biggest groups, with a note. */
function tableView(report: BinaryMetaReport): { view: BinaryMetaReport; notes: string[] } {
  const notes: string[] = [];
  const groups: BinaryMetaReport['groups'] = {};
  for (const [key, byValue] of Object.entries(report.groups)) {
    const entries = Object.entries(byValue);
    if (entries.length <= tableGroupRows) {
      groups[key] = byValue;
      continue;
    }
    const kept = entries.sort(([, left], [, right]) => right.records - left.records).slice(0, tableGroupRows);
    groups[key] = Object.fromEntries(kept);
    notes.push(`by ${key}: the ${tableGroupRows} largest of ${entries.length} groups shown; all are in the report`);
  }
  return { view: { ...report, groups }, notes };
}

async function writeReport(flags: MetaFlags, report: unknown): Promise<void> {
  await writeFileAtomic(flags.out, `${JSON.stringify(report, null, 2)}\n`);
  if (flags.report) {
    const { writeReportFromResults } = await import('../../report/index.js');
    await writeReportFromResults({ input: flags.out, out: flags.report });
  }
}

/** Formats of recorded verdicts: a judge named beside them would be dropped, so it is refused. */
function refuseJudge(flags: MetaFlags): void {
  if (flags.judge !== undefined) throw new RubricateError('CONFIG_INVALID', `--format ${flags.format} scores recorded verdicts: leave out --judge`, { field: 'judge' });
  if (flags.report) throw new RubricateError('CONFIG_INVALID', `--report is not offered for --format ${flags.format}: its JSON report is the output`, { field: 'report' });
  const unread = (['groupBy', 'sourceField', 'includeChecks', 'heldOut'] as const).find((name) => flags[name] !== undefined);
  if (unread) {
    const flag = `--${unread.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
    throw new RubricateError('CONFIG_INVALID', `${flag} applies to --format results, not to --format ${flags.format}: leave it out`, { field: flag.slice(2) });
  }
}

/** `--format results`: a results file against human labels. */
async function resultsMeta(flags: MetaFlags, context: CommandContext, bootstrap: Bootstrap, say: (text: string) => void): Promise<number> {
  if (!flags.labels) throw new RubricateError('CONFIG_INVALID', '--format results needs --labels FILE', { field: 'labels' });
  const loaded = await loadLabels(flags.labels, { onInvalid: (error) => reportInputError(context, error) });
  const labels = flags.heldOut ? restrictLabels(loaded, new Set(readHeldOutItems(flags.heldOut))) : loaded;
  const report = await metaFromResults(flags.input, labels, {
    ...bootstrap,
    groupBy: flags.groupBy?.split(',') ?? [],
    sourceField: flags.sourceField,
    includeChecks: flags.includeChecks,
  });
  await writeReport(flags, { ...report, inputs: { ...report.inputs, labels: flags.labels } });
  if (report.scripted_by !== undefined) say(madeUpNotice(report.scripted_by));
  for (const problem of report.problems.filter((entry) => !entry.details || entry.details.file !== flags.labels)) context.stderr(`invalid input: ${problem.message}`);
  const join = report.join;
  // Whose verdicts these figures measure: the judge the results were graded with (no judge runs here).
  const recorded = await recordedJudges(flags.input).catch(() => undefined);
  if (recorded) say(`judge: ${recorded.join(' + ')}, as recorded in ${flags.input} (its verdicts are measured; no judge is called)`);
  const { view, notes } = tableView(report);
  say(formatMetaTable(view));
  for (const note of notes) say(note);
  say(
    `joined ${join.joined} labelled verdicts; ${join.verdictsWithoutLabel} verdicts unlabelled; ${join.labelsForMissingItems + join.labelsForMissingCriteria} labels matched nothing${
      join.unmatchedExamples.length > 0 ? ` (e.g. ${join.unmatchedExamples.slice(0, 3).join(', ')})` : ''
    }; ${join.labelledWithoutVerdict} labelled criteria had no verdict${join.labelledChecks > 0 ? `; ${join.labelledChecks} labelled checks left out (--include-checks)` : ''}\nreport: ${flags.out}`,
  );
  return join.invalidResultLines + join.invalidLabelLines > 0 ? exitCodes.itemsFailed : exitCodes.success;
}

/** `--format llmjudge`: a TREC graded run against its qrels, nothing called. */
async function llmJudgeMetaOf(flags: MetaFlags, context: CommandContext, bootstrap: Bootstrap, say: (text: string) => void): Promise<number> {
  if (!flags.labels) throw new RubricateError('CONFIG_INVALID', '--format llmjudge needs --labels QRELS (qid 0 docid label)', { field: 'labels' });
  refuseJudge(flags);
  const report = await llmJudgeMeta(flags.input, flags.labels);
  await writeFileAtomic(flags.out, `${JSON.stringify(report, null, 2)}\n`);
  say(`${formatLlmJudgeReport(report)}\nreport: ${flags.out}`);
  return exitCodes.success;
}

/** `--format llm-rubric`: LLM-Rubric's answer distributions, and its replay files. */
async function llmRubricMeta(flags: MetaFlags, context: CommandContext, bootstrap: Bootstrap, say: (text: string) => void): Promise<number> {
  if (flags.labels) throw new RubricateError('CONFIG_INVALID', '--format llm-rubric reads the human answers from its folder: leave out --labels', { field: 'labels' });
  refuseJudge(flags);
  const report = await llmRubricBaselines(flags.input, flags.confidence);
  const graded = flags.results !== undefined ? await llmRubricGradedRows(flags.input, flags.results, flags.confidence) : undefined;
  await writeFileAtomic(flags.out, `${JSON.stringify(graded ? { ...report, graded } : report, null, 2)}\n`);
  say(`${formatLlmRubricBaselines(report)}${graded ? `\n${formatGradedRows(graded)}` : ''}\nreport: ${flags.out}`);
  if (flags.writeReplay !== undefined && flags.writeItems !== undefined) {
    const written = await writeLlmRubricReplay(flags.input, { items: flags.writeItems, replay: flags.writeReplay });
    say(`replay: ${written.verdicts} recorded verdicts of ${written.judge} in ${flags.writeReplay}, for the ${written.items} real-set dialogues in ${flags.writeItems} (grade them with --judge replay:${flags.writeReplay})`);
  }
  return exitCodes.success;
}

/** `--format outcome`: results whose items carry an outcome. */
async function outcomeMetaOf(flags: MetaFlags, context: CommandContext, bootstrap: Bootstrap, say: (text: string) => void): Promise<number> {
  const report = await outcomeMeta(flags.input, { outcomeField: flags.outcomeField });
  await writeReport(flags, { inputs: { results: flags.input }, ...report });
  for (const problem of report.problems) context.stderr(`invalid input: ${problem.message}`);
  say(`${formatOutcomeReport(report)}\nreport: ${flags.out}`);
  return report.items.withOutcome === 0 ? exitCodes.itemsFailed : exitCodes.success;
}

/** `--format researchrubrics`: ResearchRubrics' own figures: macro F1 per task averaged per source (ternary and binary), failure breakdown by axis. */
async function researchRubricsMetaOf(flags: MetaFlags, context: CommandContext, bootstrap: Bootstrap, say: (text: string) => void): Promise<number> {
  // ResearchRubrics' own figures: macro F1 per task averaged per source (ternary and binary), failure breakdown by axis.
  let invalid = 0;
  const labels = flags.labels
    ? await loadTernaryLabels(flags.labels, (error) => {
        invalid += 1;
        reportInputError(context, error);
      })
    : undefined;
  const report = researchRubricsMeta(await researchRubricsTasks(flags.input, labels, { sourceField: flags.sourceField }));
  await writeReport(flags, { inputs: { results: flags.input, labels: flags.labels ?? null, sourceField: flags.sourceField ?? null }, ...report });
  for (const [source, agreement] of Object.entries(report.agreement)) {
    const figure = (value: number | null) => (value === null ? 'n/a' : value.toFixed(4));
    say(`${source}: macro F1 per task ${figure(agreement.macroF1Ternary)} (3-class), ${figure(agreement.macroF1Binary)} (binary) over ${agreement.tasks} tasks`);
  }
  say(`report: ${flags.out}`);
  return invalid > 0 ? exitCodes.itemsFailed : exitCodes.success;
}

type Bootstrap = { resamples: number; seed: number; confidence: number };

/** The formats whose figures come from files alone (no pairwise set, no best-of-N benchmark). */
const recordedFormats: Record<string, (flags: MetaFlags, context: CommandContext, bootstrap: Bootstrap, say: (text: string) => void) => Promise<number>> = {
  results: resultsMeta,
  llmjudge: llmJudgeMetaOf,
  'llm-rubric': llmRubricMeta,
  outcome: outcomeMetaOf,
  researchrubrics: researchRubricsMetaOf,
};

async function runMeta(flags: MetaFlags, spec: RunSpec, context: CommandContext, dependencies: MetaCommandDependencies): Promise<number> {
  const replayFlag = flags.writeReplay !== undefined ? 'write-replay' : flags.writeItems !== undefined ? 'write-items' : flags.results !== undefined ? 'results' : undefined;
  if (replayFlag && flags.format !== 'llm-rubric') throw new RubricateError('CONFIG_INVALID', `--${replayFlag} applies to --format llm-rubric, not to --format ${flags.format}`, { field: replayFlag });
  if ((flags.writeReplay !== undefined || flags.writeItems !== undefined) && (flags.writeReplay === undefined || flags.writeItems === undefined)) throw new RubricateError('CONFIG_INVALID', '--write-replay and --write-items go together: the replay file answers for the items written beside it', { field: replayFlag === 'write-replay' ? 'write-items' : 'write-replay' });
  checkFiles({
    inputs: [{ flag: 'input', path: flags.input, folder: true }, { flag: 'labels', path: flags.labels }, { flag: 'held-out', path: flags.heldOut }, { flag: 'results', path: flags.results }],
    outputs: [{ flag: 'out', path: flags.out }, { flag: 'report', path: flags.report }, { flag: 'write-replay', path: flags.writeReplay }, { flag: 'write-items', path: flags.writeItems }],
    keep: storeFilesOf(flags),
  });
  if (flags.judging !== 'ratings' && !bestOfNImporters.has(flags.format)) throw new RubricateError('CONFIG_INVALID', `--judging applies to ${bestOfNImporters.names().join(' and ')}, not to --format ${flags.format}`, { field: 'judging' });
  // Without a judge nothing is graded: a grading setting would be dropped, so it is refused.
  const planSetting = Object.keys(spec.plan)[0];
  if (flags.judge === undefined && planSetting !== undefined) throw new RubricateError('CONFIG_INVALID', `the grading settings (${runFlagOf(`plan.${planSetting}`)}) apply when a judge runs: add --judge SPEC or leave them out`, { field: planSetting });
  const bootstrap = { resamples: flags.bootstrapResamples, seed: flags.bootstrapSeed, confidence: flags.confidence };
  const say = (text: string) => {
    if (!flags.quiet) context.stderr(text.replace(/\n$/, ''));
  };
  if (Object.hasOwn(recordedFormats, flags.format)) return recordedFormats[flags.format](flags, context, bootstrap, say);

  if (flags.judge === undefined && publishedFormats.includes(flags.format as PublishedFormat)) {
    const report = await scorePublishedJudge(flags.format as PublishedFormat, flags.input, bootstrap);
    await writeReport(flags, report);
    for (const problem of report.published.invalid) context.stderr(`invalid input: ${problem.message}`);
    say(`${formatMetaTable(report)}report: ${flags.out}`);
    return report.published.invalidRows > 0 ? exitCodes.itemsFailed : exitCodes.success;
  }

  if (bestOfNImporters.has(flags.format)) return runBestOfN(flags, spec, context, say);

  if (!pairwiseImporters.has(flags.format)) {
    throw new RubricateError('CONFIG_INVALID', `unknown meta format "${flags.format}" (known: results, outcome, researchrubrics, llmjudge, llm-rubric, ${[...pairwiseImporters.names(), ...bestOfNImporters.names()].join(', ')})`, { field: 'format' });
  }
  if (flags.judge === undefined) {
    throw new RubricateError('CONFIG_INVALID', `--format ${flags.format} is a pairwise dataset: name the judge to run on it with --judge SPEC`, { field: 'judge' });
  }
  return runPairwiseJudge(flags, spec, context, dependencies, bootstrap, say);
}

async function runPairwiseJudge(
  flags: MetaFlags,
  spec: RunSpec,
  context: CommandContext,
  dependencies: MetaCommandDependencies,
  bootstrap: Bootstrap,
  say: (text: string) => void,
): Promise<number> {
  const importer = getPairwiseImporter(flags.format);
  // Pairs are compared as `compare` compares them: what its grading mode does not read is refused, not dropped.
  const [unread] = unreadPlanSettings(spec.plan, 'pairwise');
  if (unread) throw new RubricateError('CONFIG_INVALID', `${unread.flag} does not apply to a pairwise set (pairs are compared as compare compares them): leave it out`, { field: unread.setting });
  const session = await openRunSession(spec, modelFromFlags(flags, 'judge').credentials, flags, { context, out: flags.out, needsJudge: 'pairwise meta-evaluation needs a judge (not --judge none)' });
  const { judges, judge } = session;
  try {
    const judgePairs = dependencies.createJudgePairs({ judge: judge!, judges, store: session.store, spec, signal: context.signal });
    const report = await runPairwiseMeta(
      flags.format,
      flags.input,
      importer.read(flags.input, { onWarning: (message) => context.stderr(`warning: ${message}`) }),
      judgePairs,
      { ...bootstrap, signal: context.signal, onInvalid: (error) => reportInputError(context, error) },
    );
    if (context.signal.aborted) {
      context.stderr('interrupted: verdicts obtained so far are in the reply cache; rerun the same command to resume');
      return exitCodes.interrupted;
    }
    const madeUp = madeUpBy(judges.map((member) => member.provenance.id).join('+'));
    const withJudge = { ...madeUpFields(madeUp), ...report, run: { ...report.run, judge: { id: judges.map((member) => member.provenance.id).join('+'), model: judges.map((member) => member.provenance.model).join('+') } } };
    await writeReport(flags, withJudge);
    session.finish();
    const run = report.run;
    if (madeUp !== undefined) say(madeUpNotice(madeUp));
    say(
      `${formatMetaTable(report)}judge ${judge!.provenance.id} on ${run.judged} labelled pairs of ${run.file}${run.unlabelled > 0 ? ` (${run.unlabelled} unlabelled pairs skipped)` : ''}; ${run.invalidVerdicts} pairs with an invalid verdict\nreport: ${flags.out}`,
    );
    const problems: SerializedError[] = run.problems;
    return run.invalidRows > 0 || problems.length > 0 ? exitCodes.itemsFailed : exitCodes.success;
  } finally {
    await session.close();
  }
}

/**
 * `--judging rank-four`: the ranker reads the plan's sampling and asks its own question; the rest
 * of the plan is the rater's, which grades beside it. A template or protocol it cannot ask is refused.
 */
function rankFourStrategy(spec: RunSpec): GradingStrategy {
  const plan = { template: spec.plan.template, protocol: spec.plan.protocol, sampling: spec.plan.sampling };
  const [unread] = unreadPlanSettings(plan, 'rank-four');
  if (unread) throw new RubricateError('CONFIG_INVALID', unread.message, { field: 'judging' });
  return gradingModes.get('rank-four').create(plan, withDefaultSampling(plan.sampling));
}

/** A best-of-N benchmark: the judge rated (or ranking four) and scored, with the length baselines; without --judge, the baselines alone. */
async function runBestOfN(flags: MetaFlags, spec: RunSpec, context: CommandContext, say: (text: string) => void): Promise<number> {
  const benchmark = flags.format as BestOfNBenchmark;
  const importer = bestOfNImporters.get(benchmark);
  const records = importer.read(flags.input);
  const describe = (scores: { overall: unknown }) => (typeof scores.overall === 'number' ? scores.overall.toFixed(4) : scores.overall && typeof scores.overall === 'object' ? (scores.overall as { total_avg_acc: number }).total_avg_acc.toFixed(4) : 'n/a');
  if (flags.judge === undefined) {
    const sets = [];
    let invalid = 0;
    for await (const record of records) {
      if (record.kind === 'invalid') {
        invalid += 1;
        reportInputError(context, record.error);
      } else sets.push(record.set);
    }
    const baselines = lengthBaselines(benchmark, sets);
    await writeReport(flags, { benchmark, run: { file: flags.input, sets: sets.length, invalid_rows: invalid }, baselines });
    say(`${benchmark}: longer-response baseline ${describe(baselines.longer)}, shorter-response baseline ${describe(baselines.shorter)} over ${sets.length} sets\nreport: ${flags.out}`);
    return invalid > 0 ? exitCodes.itemsFailed : exitCodes.success;
  }
  const session = await openRunSession(spec, modelFromFlags(flags, 'judge').credentials, flags, { context, out: flags.out, needsJudge: `${benchmark} meta-evaluation needs a judge (not --judge none)` });
  try {
    const options = { ...session.graderOptions(), omitText: true, signal: context.signal };
    const rater = new Grader(options);
    const ranker = flags.judging === 'rank-four' ? new Grader({ ...options, strategy: rankFourStrategy(spec) }) : undefined;
    const report = await runBestOfNMeta(records, { benchmark, judging: flags.judging, rater, ...(ranker ? { ranker } : {}), onInvalid: (error) => reportInputError(context, error) });
    if (context.signal.aborted) {
      context.stderr('interrupted: verdicts obtained so far are in the reply cache; rerun the same command to resume');
      return exitCodes.interrupted;
    }
    const madeUp = madeUpBy(rater.judgeInfo);
    await writeReport(flags, { ...madeUpFields(madeUp), ...report, run: { ...report.run, file: flags.input }, judge: rater.judgeInfo ?? null, ...(ranker ? { ranking_judge: ranker.judgeInfo ?? null } : {}) });
    session.finish();
    if (madeUp !== undefined) say(madeUpNotice(madeUp));
    say(`${benchmark}: judge ${session.judge!.provenance.id} ${describe(report.scores)} (${flags.judging}); longer-response baseline ${describe(report.baselines.longer)}, shorter ${describe(report.baselines.shorter)}; ${report.run.judged} of ${report.run.sets} sets judged${report.run.errors > 0 ? `, ${report.run.errors} in error` : ''}\nreport: ${flags.out}`);
    return report.run.invalid_rows + report.run.errors > 0 ? exitCodes.itemsFailed : exitCodes.success;
  } finally {
    await session.close();
  }
}
