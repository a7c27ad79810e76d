import { dropLintErrors } from '../../lint/repair.js';
import { Option, type Command } from 'commander';
import { RubricateError, exitCodes, toRubricateError } from '../../errors.js';
import {
  contrastGroup,
  formatContrastiveSummary,
  groupPairs,
  readPreferencePairs,
  summarizeContrastive,
  type ContrastiveOutcome,
  type SplitMode,
} from '../../generation/contrastive.js';
import { isFatal } from '../../generation/decompose-filter.js';
import type { GeneratedRubric, RubricGenerator } from '../../generation/generator.js';
import { promptVersions } from '../../generation/prompts.js';
import { addGeneratorOptions } from '../generator-options.js';
import { readPromptRecords, type PromptRecord } from '../../generation/inputs.js';
import { mapInOrder } from '../../util/ordered-stream.js';
import type { InvalidRecord } from '../../rubric/records.js';
import { rubricateVersion } from '../../version.js';
import { quietHelp, reportInputError, type CommandContext } from '../context.js';
import { organizeHelp } from '../help.js';
import { addJudgeOptions, parsePositiveInteger } from '../judge-options.js';
import { runSpecOf } from '../run-spec-flags.js';
import type { RunSpec } from '../../spec/run-spec.js';
import { addModelCallOptions, costLine, drain, generatorSummary, prepareModelCalls, usageLine, type ModelCallFlags } from '../model-calls.js';
import { storeFilesOf } from '../store-options.js';
import { checkFiles, JsonLinesWriter, writeFileAtomic } from '../../util/files.js';
import { reportingLintRepair, type LintRepairCounts } from '../lint-repair.js';
import { addDistillOptions, runDistill, type DistillFlags } from './generate-distill.js';
import { addDeprecatedFlags } from '../deprecated-flags.js';

interface GenerateFlags extends ModelCallFlags, Omit<DistillFlags, 'input' | keyof ModelCallFlags> {
  input?: string;
  format: string;
  distill?: boolean;
  referenceField: string;
  attempts: number;
  split: SplitMode;
  limit?: number;
  /** `--lint`: each generated rubric linted; criteria with lint errors dropped, a rubric no drop fixes refused. */
  lint?: boolean;
}

export function registerGenerateCommand(program: Command, context: CommandContext): void {
  const command = program
    .command('generate')
    .description('write rubrics for prompts (--format prompts), or contrastive rubrics from preference pairs kept only when they order the pair correctly (--format pairs or a pairwise benchmark)')
    .option('--input <file>', 'prompts JSONL {id, prompt (string or messages), reference?}; or preference pairs: --format pairs JSONL {id?, prompt, response_a, response_b, label}, or a benchmark file/folder')
    .option('--format <name>', 'prompts (default), pairs (the JSONL compare reads: {id?, prompt, response_a, response_b, label}; the gold winner is the chosen response), or a pairwise benchmark: llmbar, pandalm, autoj, judgebench, hhh', 'prompts')
    .option('--reference-field <name>', 'field of --input lines holding a reference answer', 'reference')
    .option('--attempts <k>', 'contrastive: generations tried per pair before giving up', parsePositiveInteger('attempts'), 3)
    .addOption(new Option('--split <mode>', 'contrastive: per-prompt (other pairs of a prompt test its rubric) or none').choices(['per-prompt', 'none']).default('per-prompt'))
    .option('--limit <n>', 'contrastive: use only the first n prompts (pair groups)', parsePositiveInteger('limit'))
    .requiredOption('--out <file>', 'items JSONL: {id, prompt, rubric, reference?, metadata}')
    .option('--summary <file>', 'write the run summary (JSON) here: counts, usage and cost; contrastive: also the keep-rate and ordering figures')
    .option('--lint', 'lint each generated rubric, drop the criteria with lint errors (of a duplicate or contradictory pair, the later one) and refuse a rubric no drop fixes; contrastive: before the rubric is graded on its pair (a refused one counts as a failed attempt). --distill always lints its rubric')
    .option('--quiet', quietHelp);
  addDistillOptions(command);
  addGeneratorOptions(command);
  // Contrastive generation grades chosen and rejected with the judge (--scoring compares them, default weighted_mean).
  addJudgeOptions(command);
  addModelCallOptions(command);
  addDeprecatedFlags(command, context);
  organizeHelp(command, [
    'rubricate generate --input prompts.jsonl --generator openai:gpt-4.1 --out items.jsonl',
    'rubricate generate --format pairs --input examples/pairs/pairs.jsonl --generator openai:gpt-4.1 --judge openai:gpt-4.1-mini --out kept.jsonl',
  ]);
  command.action(async (flags: GenerateFlags, self: Command) => {
    refuseUnreadDistillFlags(flags, self);
    context.exitCode = await runGenerate(flags, runSpecOf(self), context);
  });
}

async function runGenerate(flags: GenerateFlags, spec: RunSpec, context: CommandContext): Promise<number> {
  if (flags.input === undefined) throw new RubricateError('CONFIG_INVALID', 'give --input: prompts (--format prompts) or preference pairs (--format pairs, llmbar, …)', { field: 'input' });
  const contrastive = flags.format !== 'prompts';
  checkFiles({
    inputs: [{ flag: 'input', path: flags.input, folder: contrastive }, { flag: 'prices', path: flags.prices }, { flag: 'distill-rubrics', path: flags.distillRubrics }],
    outputs: [{ flag: 'out', path: flags.out }, { flag: 'summary', path: flags.summary }],
    keep: storeFilesOf(flags),
  });
  if (flags.distill) return runDistill({ ...flags, input: flags.input }, spec, context);
  return contrastive ? runContrastive(flags, spec, flags.input, context) : runPrompts(flags, spec, flags.input, context);
}

const distillOnlyFlags = ['distillRubrics', 'distillPrompts', 'distillPairs', 'distillCandidates', 'distillSize', 'distillHardenPairs', 'distillSamples'] as const;

/** Settings `--distill` does not read (it caps with its own `--distill-*` flags). */
const notReadByDistill = ['attempts', 'split', 'limit', 'referenceField'] as const;

/** A setting the chosen path would not read is refused by name: `--distill-*` without `--distill`, contrastive or prompt settings with it. */
function refuseUnreadDistillFlags(flags: GenerateFlags, command: Command): void {
  const flagName = (attribute: string) => `--${attribute.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
  const unread = flags.distill ? notReadByDistill : distillOnlyFlags;
  const given = unread.find((name) => command.getOptionValueSource(name) === 'cli');
  if (given === undefined) return;
  const message = flags.distill ? `${flagName(given)} is not read by --distill (its caps are the --distill-* flags)` : `${flagName(given)} applies to --distill only`;
  throw new RubricateError('CONFIG_INVALID', message, { field: given });
}

/** `generate --lint`: the generated rubric with its lint errors dropped, each drop said on stderr; undefined when no drop fixes it. */
function lintGenerated(outcome: { record: PromptRecord; generated: GeneratedRubric }, context: CommandContext, counts: { lintDropped: number; lintRefused: number }): GeneratedRubric | undefined {
  const { record, generated } = outcome;
  const repair = dropLintErrors(generated.rubric);
  counts.lintDropped += repair.dropped.length;
  for (const finding of repair.dropped) context.stderr(`lint: id ${record.id}: dropped criterion ${finding.criterion_id ?? ''} [${finding.rule}] ${finding.message}`);
  if (repair.rubric === undefined) {
    counts.lintRefused += 1;
    const reasons = repair.unresolved.map((finding) => `[${finding.rule}] ${finding.message}`).join('; ');
    context.stderr(`failed: id ${record.id}: [RUBRIC_LINT_FAILED] the generated rubric has lint errors no dropped criterion fixes: ${reasons}`);
    return undefined;
  }
  for (const finding of repair.warnings) context.stderr(`lint warning: id ${record.id}: [${finding.rule}] ${finding.message}`);
  return { ...generated, rubric: repair.rubric };
}

type Outcome = { kind: 'invalid'; read: InvalidRecord } | { kind: 'ok'; record: PromptRecord; generated: GeneratedRubric } | { kind: 'error'; record: PromptRecord; error: RubricateError };

type PromptCounts = { ok: number; failed: number; invalid: number; criteria: number; checksProposed: number; checksKept: number; checksRejected: number; lintDropped: number; lintRefused: number };

/** A failed run's closing: an interrupted one says how to resume; anything else is thrown on. */
async function closeAfterFailure(error: unknown, closers: { writer: JsonLinesWriter; models: { close(): Promise<void> } }, context: CommandContext, written: string): Promise<number> {
  await closers.writer.close();
  await closers.models.close();
  if (context.signal.aborted) {
    context.stderr(`interrupted: ${written} written so far are complete; rerun the same command to finish (answers already paid for come from the cache)`);
    return exitCodes.interrupted;
  }
  throw error;
}

async function runPrompts(flags: GenerateFlags, spec: RunSpec, input: string, context: CommandContext): Promise<number> {
  const models = await prepareModelCalls(flags, spec, context, { out: flags.out, grading: false });
  const { generator } = models;
  const generateAll = () =>
    mapInOrder(readPromptRecords(input, { referenceField: flags.referenceField }), async (read): Promise<Outcome> => {
      if (read.kind === 'invalid') return { kind: 'invalid', read };
      try {
        const generated = await generator.generate({ prompt: read.record.prompt, reference: read.record.reference });
        return { kind: 'ok', record: read.record, generated };
      } catch (error) {
        if (isFatal(error) || context.signal.aborted) throw error;
        return { kind: 'error', record: read.record, error: toRubricateError(error) };
      }
    }, { window: models.window });
  if (models.dryRun) {
    try {
      // One call per prompt the cache does not answer: nothing depends on an answer, so one pass counts it all.
      await models.dryRun.estimate(() => drain(generateAll()), { command: 'generate', planned: false, assumptions: [] });
      return exitCodes.success;
    } finally {
      await models.close();
    }
  }
  const writer = new JsonLinesWriter(flags.out);
  const counts: PromptCounts = { ok: 0, failed: 0, invalid: 0, criteria: 0, checksProposed: 0, checksKept: 0, checksRejected: 0, lintDropped: 0, lintRefused: 0 };
  try {
    for await (const outcome of generateAll()) await writePromptOutcome(outcome, { flags, input, writer, counts, context });
  } catch (error) {
    return closeAfterFailure(error, { writer, models }, context, 'rubrics');
  }
  await writer.close();
  models.finish();
  await models.close();
  const cost = models.costOf('generator', generator.usage);
  if (flags.summary) await writeFileAtomic(flags.summary, `${JSON.stringify(promptsSummary(flags, generator, counts, cost), null, 2)}\n`);
  const failed = counts.failed + counts.invalid > 0;
  if (flags.quiet) return failed ? exitCodes.itemsFailed : exitCodes.success;
  context.stderr(
    [
      `${counts.ok + counts.failed + counts.invalid} prompts: ${counts.ok} rubrics written, ${counts.failed} failed, ${counts.invalid} invalid`,
      `criteria: ${counts.ok > 0 ? (counts.criteria / counts.ok).toFixed(1) : 'n/a'} per rubric; checks: ${counts.checksProposed} proposed, ${counts.checksKept} kept, ${counts.checksRejected} dropped (judged as hard rules instead)`,
      usageLine('generator', generator.usage, cost),
      `rubrics: ${flags.out}${flags.summary ? `\nsummary: ${flags.summary}` : ''}`,
    ].join('\n'),
  );
  return failed ? exitCodes.itemsFailed : exitCodes.success;
}

/** One prompt's outcome: an input error or a failure said on stderr, a rubric (linted when asked) written. */
async function writePromptOutcome(outcome: Outcome, run: { flags: GenerateFlags; input: string; writer: JsonLinesWriter; counts: PromptCounts; context: CommandContext }): Promise<void> {
  const { counts, context } = run;
  if (outcome.kind === 'invalid') {
    counts.invalid += 1;
    reportInputError(context, outcome.read.error);
    return;
  }
  if (outcome.kind === 'error') {
    counts.failed += 1;
    context.stderr(`failed: ${run.input}:${outcome.record.line} id ${outcome.record.id}: [${outcome.error.code}] ${outcome.error.message}`);
    return;
  }
  const { record } = outcome;
  const generated = run.flags.lint ? lintGenerated(outcome, context, counts) : outcome.generated;
  if (generated === undefined) {
    counts.failed += 1;
    return;
  }
  counts.ok += 1;
  counts.criteria += generated.rubric.criteria.length;
  counts.checksProposed += generated.checks.proposed;
  counts.checksKept += generated.checks.kept;
  counts.checksRejected += generated.checks.rejected;
  for (const warning of generated.warnings) context.stderr(`warning: id ${record.id}: ${warning}`);
  const line: Record<string, unknown> = { id: record.id, prompt: record.promptInput, rubric: generated.rubric };
  if (record.reference !== undefined) line.reference = record.reference;
  if (record.metadata) line.metadata = record.metadata;
  await run.writer.write(line);
}

function promptsSummary(flags: GenerateFlags, generator: RubricGenerator, counts: PromptCounts, cost: number | null): Record<string, unknown> {
  return {
    rubricate_version: rubricateVersion,
    method: 'generate',
    prompt_version: promptVersions.generate,
    generator: generatorSummary(generator),
    prompts: counts.ok + counts.failed + counts.invalid,
    rubrics: counts.ok,
    failed: counts.failed,
    invalid: counts.invalid,
    criteria_per_rubric: counts.ok > 0 ? Math.round((counts.criteria / counts.ok) * 1e4) / 1e4 : null,
    checks: { proposed: counts.checksProposed, kept: counts.checksKept, rejected: counts.checksRejected },
    ...(flags.lint ? { lint: { criteria_dropped: counts.lintDropped, rubrics_refused: counts.lintRefused } } : {}),
    usage: { generator: { ...generator.usage, cost_usd: cost } },
  };
}

async function runContrastive(flags: GenerateFlags, spec: RunSpec, pairsSource: string, context: CommandContext): Promise<number> {
  const { groups, summary } = await contrastiveGroups(flags, pairsSource, context);
  const models = await prepareModelCalls(flags, spec, context, { out: flags.out, grading: true });
  const { generator } = models;
  const lintCounts: LintRepairCounts = { criteriaDropped: 0, rubricsRefused: 0 };
  const repair = flags.lint ? reportingLintRepair(context, lintCounts, (at: { pairId: string; attempt: number }) => `pair ${at.pairId} attempt ${at.attempt}`) : undefined;
  const contrastAll = (heldOutWithoutKeep: boolean) => {
    const grader = models.grader();
    return mapInOrder(groups, (group) => contrastGroup(group, { generator, grader, attempts: flags.attempts, heldOutWithoutKeep, repair }), { window: models.window });
  };
  if (models.dryRun) {
    try {
      // Real answers (the cache's) decide as in a real run; synthetic ones plan the most calls a pair can take.
      await models.dryRun.estimate((answers) => drain(contrastAll(answers === 'synthetic')), {
        command: 'generate',
        planned: true,
        assumptions: [
          `contrastive: synthetic verdicts tie the pair, so each pair's ${flags.attempts} attempt(s) (--attempts) are all made, each rubric graded on its pair, and the held-out pairs are graded with the last one: an upper bound (a real run stops at the first rubric that orders the pair correctly, and grades held-out pairs only with a kept one)`,
        ],
      });
      return exitCodes.success;
    } finally {
      await models.close();
    }
  }
  const grader = models.grader();
  const writer = new JsonLinesWriter(flags.out);
  const outcomes: ContrastiveOutcome[] = [];
  try {
    for await (const outcome of contrastAll(false)) {
      outcomes.push(outcome);
      if (outcome.rubric) await writer.write(keptLine(outcome));
    }
  } catch (error) {
    return closeAfterFailure(error, { writer, models }, context, 'kept rubrics');
  }
  await writer.close();
  models.finish();
  await models.close();
  const heldOutPairs = groups.reduce((total, group) => total + group.heldOut.length, 0);
  const report = summarizeContrastive(outcomes, { source: pairsSource, format: flags.format, readSummary: summary, groups: groups.length, heldOutPairs, split: flags.split, attempts: flags.attempts, generator, grader });
  const cost = { generator: models.costOf('generator', report.usage.generator), judge: models.costOf('judge', report.usage.judge) };
  const lint = flags.lint ? { lint: { criteria_dropped: lintCounts.criteriaDropped, rubrics_refused: lintCounts.rubricsRefused } } : {};
  const document = { ...report, ...lint, usage: { generator: { ...report.usage.generator, cost_usd: cost.generator }, judge: { ...report.usage.judge, cost_usd: cost.judge } } };
  if (flags.summary) await writeFileAtomic(flags.summary, `${JSON.stringify(document, null, 2)}\n`);
  if (!flags.quiet) context.stderr(`${formatContrastiveSummary(report)}\n${costLine(cost)}\nrubrics: ${flags.out}${flags.summary ? `\nsummary: ${flags.summary}` : ''}`);
  return exitCodes.success;
}

/** The pairs read and grouped by prompt (first `--limit` groups); invalid records said on stderr. */
async function contrastiveGroups(flags: GenerateFlags, pairsSource: string, context: CommandContext) {
  const { pairs, summary } = await readPreferencePairs(pairsSource, flags.format, (message) => context.stderr(`warning: ${message}`));
  for (const error of summary.invalid.slice(0, 20)) reportInputError(context, error);
  if (summary.invalid.length > 20) context.stderr(`… ${summary.invalid.length - 20} more invalid records`);
  let groups = groupPairs(pairs, flags.split);
  if (flags.limit !== undefined) groups = groups.slice(0, flags.limit);
  if (groups.length === 0) throw new RubricateError('INPUT_INVALID', 'no usable preference pairs (ties and unlabelled pairs are skipped)', { file: pairsSource });
  return { groups, summary };
}

/** A kept contrastive rubric as an items line, with how it was kept. */
function keptLine(outcome: ContrastiveOutcome): Record<string, unknown> {
  const last = outcome.attempts[outcome.attempts.length - 1];
  return {
    id: outcome.pair_id,
    prompt: outcome.prompt,
    rubric: outcome.rubric,
    ...(outcome.reference !== undefined ? { reference: outcome.reference } : {}),
    metadata: {
      contrastive: {
        pair_id: outcome.pair_id,
        ...(outcome.source !== undefined ? { source: outcome.source } : {}),
        attempts_used: outcome.attempts_used,
        chosen_score: last.chosen_score,
        rejected_score: last.rejected_score,
      },
    },
  };
}
