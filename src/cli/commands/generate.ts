import { Option, type Command } from 'commander';
import { emptyUsage, type Usage } from '../../engine/usage.js';
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
import type { GeneratedRubric } from '../../generation/generator.js';
import { buildRubricGenerator } from '../../generation/generator-options.js';
import { addGeneratorOptions, generatorOptionsFrom, type GeneratorFlags } from '../generator-options.js';
import { readPromptRecords, type PromptRecord } from '../../generation/inputs.js';
import { mapInOrder } from '../../util/ordered-stream.js';
import { checkRunnerFor } from '../../pipeline/check-runner.js';
import type { InvalidRecord } from '../../rubric/records.js';
import { Grader } from '../../pipeline/grader.js';
import { reportInputError, type CommandContext } from '../context.js';
import { addJudgeOptions, buildJudges, graderOptionsFrom, openStore, parsePositiveInteger, type JudgeFlags, type OpenedStore } from '../judge-options.js';
import { storeFilesOf } from '../store-options.js';
import { checkFiles, JsonLinesWriter, writeFileAtomic } from '../../util/files.js';
import { addDeprecatedFlags } from '../deprecated-flags.js';

interface GenerateFlags extends JudgeFlags, GeneratorFlags {
  input?: string;
  format: string;
  referenceField: string;
  attempts: number;
  split: SplitMode;
  limit?: number;
  out: string;
  summary?: string;
  scoring?: string;
  checkMode: 'strict' | 'loose';
  quiet?: boolean;
}

export function registerGenerateCommand(program: Command, context: CommandContext): void {
  const command = program
    .command('generate')
    .description('write rubrics for prompts (--format prompts), or contrastive rubrics from preference pairs kept only when they order the pair correctly (--format pairs or a pairwise benchmark)')
    .option('--input <file>', 'prompts JSONL {id, prompt (string or messages), reference?}; or preference pairs: JSONL {id?, prompt, chosen, rejected}, or a benchmark file/folder')
    .option('--format <name>', 'prompts (default), pairs (JSONL {id?, prompt, chosen, rejected}), or a pairwise benchmark: llmbar, pandalm, autoj, judgebench, hhh', 'prompts')
    .option('--reference-field <name>', 'field of --input lines holding a reference answer', 'reference')
    .option('--attempts <k>', 'contrastive: generations tried per pair before giving up', parsePositiveInteger('attempts'), 3)
    .addOption(new Option('--split <mode>', 'contrastive: per-prompt (other pairs of a prompt test its rubric) or none').choices(['per-prompt', 'none']).default('per-prompt'))
    .option('--limit <n>', 'contrastive: use only the first n prompts (pair groups)', parsePositiveInteger('limit'))
    .requiredOption('--out <file>', 'items JSONL: {id, prompt, rubric, reference?, metadata}')
    .option('--summary <file>', 'contrastive: write the keep-rate / ordering summary (JSON) here')
    .option('--scoring <name>', 'contrastive: scoring that compares chosen and rejected (default: weighted_mean, as grade uses for items)')
    .addOption(new Option('--check-mode <mode>', 'contrastive: IFEval strict or loose evaluation of checks').choices(['strict', 'loose']).default('strict'))
    .option('--quiet', 'no per-item warnings');
  addGeneratorOptions(command);
  addJudgeOptions(command, { batching: true });
  addDeprecatedFlags(command, context);
  command.action(async (flags: GenerateFlags) => {
    context.exitCode = await runGenerate(flags, context);
  });
}

async function runGenerate(flags: GenerateFlags, context: CommandContext): Promise<number> {
  if (flags.input === undefined) throw new RubricateError('CONFIG_INVALID', 'give --input: prompts (--format prompts) or preference pairs (--format pairs, llmbar, …)', { field: 'input' });
  const contrastive = flags.format !== 'prompts';
  checkFiles({
    inputs: [{ flag: 'input', path: flags.input, folder: contrastive }],
    outputs: [{ flag: 'out', path: flags.out }, { flag: 'summary', path: flags.summary }],
    keep: storeFilesOf(flags),
  });
  const opened = await openStore(flags, flags.out);
  try {
    return contrastive ? await runContrastive(flags, flags.input, context, opened) : await runPrompts(flags, flags.input, context, opened);
  } finally {
    opened.close();
  }
}

type Outcome = { kind: 'invalid'; read: InvalidRecord } | { kind: 'ok'; record: PromptRecord; generated: GeneratedRubric } | { kind: 'error'; record: PromptRecord; error: RubricateError };

async function runPrompts(flags: GenerateFlags, input: string, context: CommandContext, opened: OpenedStore): Promise<number> {
  const { generator, judge } = await buildRubricGenerator({ ...generatorOptionsFrom(flags), store: opened.store, signal: context.signal });
  const writer = new JsonLinesWriter(flags.out);
  const counts = { ok: 0, failed: 0, invalid: 0, criteria: 0, checksProposed: 0, checksKept: 0, checksRejected: 0 };
  try {
    const outcomes = mapInOrder(readPromptRecords(input, { referenceField: flags.referenceField }), async (read): Promise<Outcome> => {
      if (read.kind === 'invalid') return { kind: 'invalid', read };
      try {
        const generated = await generator.generate({ prompt: read.record.prompt, reference: read.record.reference });
        return { kind: 'ok', record: read.record, generated };
      } catch (error) {
        if (isFatal(error) || context.signal.aborted) throw error;
        return { kind: 'error', record: read.record, error: toRubricateError(error) };
      }
    }, { window: flags.concurrency });
    for await (const outcome of outcomes) {
      if (outcome.kind === 'invalid') {
        counts.invalid += 1;
        reportInputError(context, outcome.read.error);
        continue;
      }
      if (outcome.kind === 'error') {
        counts.failed += 1;
        context.stderr(`failed: ${input}:${outcome.record.line} id ${outcome.record.id}: [${outcome.error.code}] ${outcome.error.message}`);
        continue;
      }
      const { record, generated } = outcome;
      counts.ok += 1;
      counts.criteria += generated.rubric.criteria.length;
      counts.checksProposed += generated.checks.proposed;
      counts.checksKept += generated.checks.kept;
      counts.checksRejected += generated.checks.rejected;
      if (!flags.quiet) for (const warning of generated.warnings) context.stderr(`warning: id ${record.id}: ${warning}`);
      const line: Record<string, unknown> = { id: record.id, prompt: record.promptInput, rubric: generated.rubric };
      if (record.reference !== undefined) line.reference = record.reference;
      if (record.metadata) line.metadata = record.metadata;
      await writer.write(line);
    }
  } catch (error) {
    await writer.close();
    await judge.close?.();
    if (context.signal.aborted) {
      context.stderr('interrupted: rubrics written so far are complete; rerun the same command to finish (answers already paid for come from the cache)');
      return exitCodes.interrupted;
    }
    throw error;
  }
  await writer.close();
  await judge.close?.();
  opened.finish();
  context.stderr(
    [
      `${counts.ok + counts.failed + counts.invalid} prompts: ${counts.ok} rubrics written, ${counts.failed} failed, ${counts.invalid} invalid`,
      `criteria: ${counts.ok > 0 ? (counts.criteria / counts.ok).toFixed(1) : 'n/a'} per rubric; checks: ${counts.checksProposed} proposed, ${counts.checksKept} kept, ${counts.checksRejected} dropped (judged as hard rules instead)`,
      usageLine('generator', generator.usage),
      `rubrics: ${flags.out}`,
    ].join('\n'),
  );
  return counts.failed + counts.invalid > 0 ? exitCodes.itemsFailed : exitCodes.success;
}

async function runContrastive(flags: GenerateFlags, pairsSource: string, context: CommandContext, opened: OpenedStore): Promise<number> {
  const store = opened.store;
  // The rubricate pairs JSONL is "jsonl" to the pair reader and in the summary it writes.
  const pairFormat = flags.format === 'pairs' ? 'jsonl' : flags.format;
  const { pairs, summary } = await readPreferencePairs(pairsSource, pairFormat);
  for (const error of summary.invalid.slice(0, 20)) reportInputError(context, error);
  if (summary.invalid.length > 20) context.stderr(`… ${summary.invalid.length - 20} more invalid records`);
  let groups = groupPairs(pairs, flags.split);
  if (flags.limit !== undefined) groups = groups.slice(0, flags.limit);
  if (groups.length === 0) throw new RubricateError('INPUT_INVALID', 'no usable preference pairs (ties and unlabelled pairs are skipped)', { file: pairsSource });

  const { generator, judge: generatorJudge } = await buildRubricGenerator({ ...generatorOptionsFrom(flags), store, signal: context.signal });
  const judges = await buildJudges(flags);
  const grader = new Grader({
    judges,
    store,
    checkRunner: checkRunnerFor(),
    checkMode: flags.checkMode,
    scoring: flags.scoring ?? 'weighted_mean',
    signal: context.signal,
    ...graderOptionsFrom(flags),
  });
  const writer = new JsonLinesWriter(flags.out);
  const outcomes: ContrastiveOutcome[] = [];
  const closeAll = async () => {
    await writer.close();
    await generatorJudge.close?.();
    for (const member of judges) await member.close?.();
  };
  try {
    for await (const outcome of mapInOrder(groups, (group) => contrastGroup(group, { generator, grader, attempts: flags.attempts }), { window: flags.concurrency })) {
      outcomes.push(outcome);
      if (!outcome.rubric) continue;
      const last = outcome.attempts[outcome.attempts.length - 1];
      await writer.write({
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
      });
    }
  } catch (error) {
    await closeAll();
    if (context.signal.aborted) {
      context.stderr('interrupted: kept rubrics written so far are complete; rerun the same command to finish (answers already paid for come from the cache)');
      return exitCodes.interrupted;
    }
    throw error;
  }
  await closeAll();
  const heldOutPairs = groups.reduce((total, group) => total + group.heldOut.length, 0);
  const report = summarizeContrastive(outcomes, {
    source: pairsSource,
    format: pairFormat,
    readSummary: summary,
    groups: groups.length,
    heldOutPairs,
    split: flags.split,
    attempts: flags.attempts,
    generator,
    grader,
  });
  if (flags.summary) await writeFileAtomic(flags.summary, `${JSON.stringify(report, null, 2)}\n`);
  opened.finish();
  context.stderr(`${formatContrastiveSummary(report)}\nrubrics: ${flags.out}${flags.summary ? `\nsummary: ${flags.summary}` : ''}`);
  return exitCodes.success;
}

function usageLine(label: string, usage: Usage = emptyUsage()): string {
  return `${label}: ${usage.calls} calls (${usage.retries} retries), ${usage.cache_hits} cache hits, ${usage.prompt_tokens} input tokens, ${usage.completion_tokens} output tokens`;
}

