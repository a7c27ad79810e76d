/**
 * `rubricate export`: results files → training sets, each in the format its consumer reads
 * (TRL, OpenAI fine-tuning), with the rule that built each row in `OUT.rules.jsonl`, line for
 * line. Items in error, invalid or unscorable are never exported; the command says how many
 * records were left out and why.
 */
import { Option, type Command } from 'commander';
import { augmentFormats, augmentRows } from '../../export/augment.js';
import { groupByPrompt, LeftOut, readCandidates, type Candidate } from '../../export/candidates.js';
import { distillFormats, distillRows } from '../../export/distill.js';
import { preferenceFormats, preferenceRows, sftFormats, sftRows, type ExportedRow, type PairingRule } from '../../export/preference.js';
import { RubricateError, exitCodes } from '../../errors.js';
import { loadLabels } from '../../meta/labels.js';
import { explanationLengths, type ExplanationLength } from '../../spec/run-spec.js';
import { checkFiles, JsonLinesWriter, writeFileAtomic } from '../../util/files.js';
import { isRecord } from '../../util/is-record.js';
import { madeUpWording } from '../../util/made-up.js';
import { reportInputError, type CommandContext } from '../context.js';
import { parseNumber, parsePositiveInteger } from '../run-spec-flags.js';
import { organizeHelp } from '../help.js';

const kinds = ['preference', 'sft', 'distill', 'augment'] as const;
type ExportKind = (typeof kinds)[number];

interface ExportFlags {
  kind: ExportKind;
  input: string[];
  out: string;
  format?: string;
  pairing: PairingRule;
  minMargin: number;
  minScore?: number;
  topK?: number;
  groupBy?: string;
  labels?: string;
  target: 'judge' | 'label';
  explanation: ExplanationLength;
  summary?: string;
  allowScripted?: boolean;
}

/** Each kind's formats, the first its default. */
const formatsOf: Record<ExportKind, readonly string[]> = { preference: preferenceFormats, sft: sftFormats, distill: distillFormats, augment: augmentFormats };

export function registerExportCommand(program: Command, context: CommandContext): void {
  const command = program
    .command('export')
    .description('turn results into training data: preference pairs (DPO/ORPO/KTO), rejection-sampled SFT, verifier-distillation sets, probe augmentation pairs')
    .addOption(new Option('--kind <kind>', 'what to build').choices([...kinds]).makeOptionMandatory())
    .requiredOption('--input <file>', 'results JSONL (repeatable); for --kind augment, a `probe --variants-out` file', (value: string, previous: string[] | undefined) => [...(previous ?? []), value])
    .requiredOption('--out <file>', 'training set JSONL (the rule of each row goes to OUT.rules.jsonl)')
    .option('--format <name>', `preference: ${preferenceFormats.join(' | ')}; sft: ${sftFormats.join(' | ')}; distill: ${distillFormats.join(' | ')}; augment: ${augmentFormats.join(' | ')} (default: the first)`)
    .addOption(new Option('--pairing <rule>', 'preference: which pairs of a prompt').choices(['best-vs-worst', 'best-vs-each', 'all']).default('best-vs-worst'))
    .option('--min-margin <x>', 'preference: smallest score difference of a pair (ties are always dropped)', parseNumber('min-margin', 0), 0)
    .option('--min-score <x>', 'sft: keep responses scoring at least this', parseNumber('min-score'))
    .option('--top-k <k>', 'sft: keep the best k responses of each prompt', parsePositiveInteger('top-k'))
    .option('--group-by <path>', 'preference, sft: the field naming a response\u2019s prompt, e.g. metadata.prompt_id (default: the same prompt messages)')
    .option('--labels <file>', 'distill: human labels JSONL (as meta --labels reads), recorded beside each verdict')
    .addOption(new Option('--target <source>', 'distill: the verdict taught, the judge\u2019s or the human label').choices(['judge', 'label']).default('judge'))
    .addOption(new Option('--explanation <length>', 'distill: the grading template\u2019s explanation length the examples teach').choices([...explanationLengths]).default('full'))
    .option('--summary <file>', 'write counts (rows, left out by reason) as JSON here')
    .option('--allow-scripted', 'export made-up verdicts (a scripted judge, fake-judge) anyway, to test a pipeline; each row is marked "scripted": true (refused otherwise)');
  organizeHelp(command, [
    'rubricate export --kind preference --input examples/training/results.jsonl --format trl --min-margin 0.2 --out preference.jsonl',
    'rubricate export --kind sft --input examples/training/results.jsonl --format messages --min-score 0.8 --top-k 1 --out sft.jsonl',
  ]);
  command.action(async (flags: ExportFlags) => {
    context.exitCode = await runExport(flags, context);
  });
}

async function runExport(flags: ExportFlags, context: CommandContext): Promise<number> {
  const rulesFile = `${flags.out}.rules.jsonl`;
  checkFiles({
    inputs: [...flags.input.map((path) => ({ flag: 'input', path })), { flag: 'labels', path: flags.labels }],
    outputs: [{ flag: 'out', path: flags.out }, { flag: 'out', path: rulesFile }, { flag: 'summary', path: flags.summary }],
  });
  const format = flags.format ?? formatsOf[flags.kind][0];
  if (!formatsOf[flags.kind].includes(format)) {
    throw new RubricateError('CONFIG_INVALID', `--format ${format} is not a format of --kind ${flags.kind} (${formatsOf[flags.kind].join(', ')})`, { field: 'format' });
  }
  const refuse = (flag: string, given: unknown, kinds: readonly ExportKind[]) => {
    if (given !== undefined && !kinds.includes(flags.kind)) throw new RubricateError('CONFIG_INVALID', `--${flag} does not apply to --kind ${flags.kind}`, { field: flag });
  };
  refuse('min-score', flags.minScore, ['sft']);
  refuse('top-k', flags.topK, ['sft']);
  refuse('group-by', flags.groupBy, ['preference', 'sft']);
  refuse('labels', flags.labels, ['distill']);
  let invalid = 0;
  const onInvalid = (error: RubricateError) => {
    invalid += 1;
    reportInputError(context, error);
  };
  const leftOut = new LeftOut();
  const scriptedSources = new Set<string>();
  const candidates = async function* () {
    for await (const candidate of readCandidates(flags.input, leftOut, onInvalid, { allow: flags.allowScripted === true })) {
      if (candidate.scripted) scriptedSources.add(candidate.source);
      yield candidate;
    }
  };
  let rows: ExportedRow[];
  if (flags.kind === 'augment') {
    if (flags.input.length !== 1) throw new RubricateError('CONFIG_INVALID', '--kind augment reads one `probe --variants-out` file', { field: 'input' });
    rows = await augmentRows(flags.input[0], format as never, leftOut, onInvalid);
  } else if (flags.kind === 'distill') {
    const all: Candidate[] = [];
    for await (const candidate of candidates()) all.push(candidate);
    const labels = flags.labels ? await loadLabels(flags.labels, { onInvalid }) : undefined;
    if (flags.target === 'label' && !labels) throw new RubricateError('CONFIG_INVALID', '--target label needs --labels FILE', { field: 'target' });
    rows = distillRows(all, { format: format as never, explanation: flags.explanation, labels, target: flags.target }, leftOut);
  } else {
    const groups = await groupByPrompt(candidates(), flags.groupBy, leftOut);
    rows =
      flags.kind === 'preference'
        ? preferenceRows(groups, { pairing: flags.pairing, minMargin: flags.minMargin, format: format as never }, leftOut)
        : sftRows(groups, { minScore: flags.minScore, topK: flags.topK, format: format as never }, leftOut);
  }
  const out = new JsonLinesWriter(flags.out);
  const rules = new JsonLinesWriter(rulesFile);
  let scriptedRows = 0;
  for (const { row, rule } of rows) {
    // A row built from any made-up verdict says so, in the row a trainer loads and in its rule.
    const scripted = citedSources(rule).some((source) => scriptedSources.has(source));
    if (scripted) scriptedRows += 1;
    await out.write(scripted ? { ...row, scripted: true } : row);
    await rules.write(scripted ? { ...rule, scripted: true } : rule);
  }
  await out.close();
  await rules.close();
  const summary = { kind: flags.kind, format, rows: rows.length, ...(scriptedRows > 0 ? { scripted_rows: scriptedRows } : {}), left_out: leftOut.total, left_out_by_reason: leftOut.entries(), invalid_lines: invalid, inputs: flags.input };
  if (flags.summary) await writeFileAtomic(flags.summary, `${JSON.stringify(summary, null, 2)}\n`);
  context.stderr(
    [
      ...(scriptedRows > 0 ? [`${madeUpWording}: ${scriptedRows} of ${rows.length} row(s) are built from made-up verdicts (--allow-scripted), each marked "scripted": true`] : []),
      `${rows.length} ${flags.kind} row(s) written to ${flags.out} (${format}), their rules to ${rulesFile}`, `${leftOut.total} left out${leftOut.total > 0 ? ':' : ''}`, ...leftOut.entries().map(({ reason, count }) => `  ${reason} ×${count}`)].join('\n'),
  );
  return invalid > 0 || rows.length === 0 ? exitCodes.itemsFailed : exitCodes.success;
}

/** The results lines (`file:line`) a row's rule cites: its chosen, rejected or only candidate. */
function citedSources(rule: Record<string, unknown>): string[] {
  const sources: string[] = [];
  for (const value of [rule, rule.chosen, rule.rejected, rule.unpaired]) {
    if (isRecord(value) && typeof value.source === 'string') sources.push(value.source);
  }
  return sources;
}
