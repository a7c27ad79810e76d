import type { Command } from 'commander';
import { RubricateError, exitCodes } from '../../errors.js';
import { checkFiles, JsonLinesWriter } from '../../util/files.js';
import { canonicalJson } from '../../util/json.js';
import { readResults, type ResultReadRecord, type ResultRecord, type ShardStamp } from '../../results/results.js';
import { organizeHelp } from '../help.js';
import type { CommandContext } from '../context.js';
import { runIndexPath, startRunRecording } from '../../results/run-index.js';
import { addRunIndexOption } from '../run-index-options.js';

interface MergeFlags {
  out: string;
  runIndex?: string;
}

interface ShardFile {
  file: string;
  lines: AsyncGenerator<ResultReadRecord>;
  /** The shard its first line names; absent for an empty file. */
  stamp?: ShardStamp;
  current?: { record: ResultRecord & { line: number; shard: ShardStamp }; fileLine: number };
  /** Results taken from it so far. */
  taken: number;
}

/** A record of the input that no file gave, between the input lines written around it. */
interface Gap {
  shard: number;
  after?: number;
  before?: number;
}

/** Missing lines named in a message before "…". */
const shownLines = 10;

/**
 * `rubricate merge`: joins the outputs of `grade --shard I/N` into one file in input order, or
 * fails writing nothing. Every shard line carries its shard, the whole input's record count and
 * the input's identity: the files must be the N shards of one input (each once, none foreign),
 * graded by one judge setup, each complete. Record k of the input is the next line of shard
 * k mod N, so a missing or cut-short shard is named with the input lines it lacks. The output is
 * written to a temporary file and replaces `--out` only once the whole merge succeeded.
 */
export function registerMergeCommand(program: Command, context: CommandContext): void {
  organizeHelp(
    addRunIndexOption(
      program
        .command('merge')
        .description('join the results files of `grade --shard I/N` into one file in input order (all N shards of one input, or nothing is written)')
        .argument('<files...>', 'the shards\' results files')
        .requiredOption('--out <file>', 'merged results JSONL'),
    ),
    [
      'rubricate merge shard-0.jsonl shard-1.jsonl --out results.jsonl',
      'rubricate merge /results/shard-*.jsonl --out results.jsonl',
    ],
  )
    .action(async (files: string[], flags: MergeFlags) => {
      context.exitCode = await runMerge(files, flags, context);
    });
}

function refused(message: string, details: Record<string, unknown> = {}): RubricateError {
  return new RubricateError('MERGE_REFUSED', message, details);
}

const describeShard = (stamp: Pick<ShardStamp, 'index' | 'count'>) => `shard ${stamp.index}/${stamp.count}`;

async function advance(shard: ShardFile): Promise<void> {
  const next = await shard.lines.next();
  if (next.done) {
    shard.current = undefined;
    return;
  }
  // Read through the results line's schema: a shard's line comes out byte-identical.
  if (next.value.kind === 'invalid') throw next.value.error;
  const { record, line: fileLine } = next.value;
  if (typeof record.line !== 'number') throw new RubricateError('INPUT_INVALID', 'not a rubricate results line with its input "line" number', { file: shard.file, line: fileLine, field: 'line' });
  if (!record.shard) {
    throw refused(`${shard.file} is not the output of \`grade --shard I/N\`: its line ${fileLine} names no shard (merge joins the shards of one run; grade the input with --shard to make them)`, { file: shard.file, line: fileLine, field: 'shard' });
  }
  if (shard.stamp && canonicalJson(record.shard) !== canonicalJson(shard.stamp)) {
    throw refused(`${shard.file} mixes shards: its line ${fileLine} is ${describeShard(record.shard)} of input ${record.shard.input_sha256.slice(0, 12)}…, its first line ${describeShard(shard.stamp)} of input ${shard.stamp.input_sha256.slice(0, 12)}…`, { file: shard.file, line: fileLine, field: 'shard' });
  }
  shard.stamp ??= record.shard;
  shard.current = { record: record as ResultRecord & { line: number; shard: ShardStamp }, fileLine };
}

/** What makes two shards' verdicts one run's: the judge setup and the scoring (the endpoint may differ per machine). */
function gradingOf(record: ResultRecord): string | undefined {
  if (!record.judge) return undefined;
  const { base_url: _endpoint, settings: _settings, ...judge } = record.judge;
  return canonicalJson({ judge, scoring: record.scoring ?? null });
}

/** The first of `files` that is not of the reference's input or split, with what differs. */
function checkSameInput(shards: ShardFile[]): void {
  const [reference] = shards;
  const wanted = reference.stamp!;
  for (const shard of shards.slice(1)) {
    const stamp = shard.stamp!;
    const details = { file: shard.file, field: 'shard' };
    if (stamp.input_sha256 !== wanted.input_sha256) {
      throw refused(`${shard.file} is a shard of another input than ${reference.file} (input ${stamp.input_sha256.slice(0, 12)}… against ${wanted.input_sha256.slice(0, 12)}…): merge only the shards of one run`, details);
    }
    if (stamp.count !== wanted.count || stamp.records !== wanted.records) {
      throw refused(`${shard.file} is ${describeShard(stamp)} of ${stamp.records} records, ${reference.file} ${describeShard(wanted)} of ${wanted.records}: the files split the input differently`, details);
    }
  }
}

/** "input lines 3, 6, 9" when the lines around each gap pin them down, else "between lines 8 and 12". */
function describeGaps(gaps: Gap[]): { text: string; lines: number[] } {
  const lines: number[] = [];
  const vague: string[] = [];
  // Gaps in a row share the lines around them: they are exact when they fill the space between.
  for (let start = 0; start < gaps.length; ) {
    let end = start;
    while (end + 1 < gaps.length && gaps[end + 1].after === gaps[start].after && gaps[end + 1].before === gaps[start].before) end += 1;
    const { after, before } = gaps[start];
    const size = end - start + 1;
    const from = (after ?? 0) + 1;
    if (before !== undefined && before - from === size) for (let line = from; line < before; line += 1) lines.push(line);
    else if (before !== undefined) vague.push(after === undefined ? `${size} record(s) before line ${before}` : `${size} record(s) between lines ${after} and ${before}`);
    else vague.push(after === undefined ? `all ${size} record(s)` : `the input's last ${size === 1 ? 'record' : `${size} records`}, after line ${after}`);
    start = end + 1;
  }
  const named = lines.length > shownLines ? `${lines.slice(0, shownLines).join(', ')}, …` : lines.join(', ');
  const parts = [...(lines.length > 0 ? [`input line${lines.length > 1 ? 's' : ''} ${named}`] : []), ...vague.slice(0, 3), ...(vague.length > 3 ? ['…'] : [])];
  return { text: parts.join('; '), lines };
}

/** The error naming every shard that is missing or cut short, with the input lines each lacks. */
function incomplete(gaps: Gap[], byIndex: Map<number, ShardFile>, wanted: ShardStamp, emptyFiles: string[]): RubricateError {
  const byShard = new Map<number, Gap[]>();
  for (const gap of gaps) {
    let list = byShard.get(gap.shard);
    if (!list) byShard.set(gap.shard, (list = []));
    list.push(gap);
  }
  const parts: string[] = [];
  const missingLines: number[] = [];
  for (const [index, list] of byShard) {
    const described = describeGaps(list);
    missingLines.push(...described.lines);
    const shard = byIndex.get(index);
    const which = describeShard({ index, count: wanted.count });
    parts.push(
      shard
        ? `${shard.file} (${which}) stops after ${shard.taken} of its ${shard.taken + list.length} results, an interrupted or failed run (missing ${list.length}: ${described.text})`
        : `${which} is missing: no file given is it (${list.length} record(s): ${described.text})`,
    );
  }
  const empty = emptyFiles.length > 0 ? `; ${emptyFiles.join(', ')} ${emptyFiles.length > 1 ? 'are' : 'is'} empty` : '';
  return refused(`the shards do not cover the input (${wanted.records} records in ${wanted.count} shards): ${parts.join('; ')}${empty}. Nothing was written; rerun those shards (the same command resumes) and merge again`, {
    field: 'shard',
    missing_shards: [...byShard.keys()].filter((index) => !byIndex.has(index)),
    missing_records: gaps.length,
    missing_lines: missingLines.slice(0, 100),
  });
}

/** Counts a merged line by its status, as the run history counts a run's items. */
function countStatus(items: { n: number; ok: number; error: number; invalid: number }, status: string): void {
  items.n += 1;
  if (status === 'ok' || status === 'error' || status === 'invalid') items[status] += 1;
}

async function runMerge(files: string[], flags: MergeFlags, context: CommandContext): Promise<number> {
  checkFiles({ inputs: files.map((file) => ({ flag: 'files', path: file })), outputs: [{ flag: 'out', path: flags.out }] });
  const shards: ShardFile[] = files.map((file) => ({ file, lines: readResults(file), taken: 0 }));
  for (const shard of shards) await advance(shard);
  const stamped = shards.filter((shard) => shard.stamp);
  const emptyFiles = shards.filter((shard) => !shard.stamp).map((shard) => shard.file);
  if (stamped.length === 0) throw refused(`none of the ${files.length} file(s) holds a result: nothing says which run they are shards of`, { field: 'shard' });
  checkSameInput(stamped);
  const byIndex = new Map<number, ShardFile>();
  for (const shard of stamped) {
    const other = byIndex.get(shard.stamp!.index);
    if (other) throw refused(`${shard.file} and ${other.file} are both ${describeShard(shard.stamp!)}: give each shard once`, { file: shard.file, field: 'shard' });
    byIndex.set(shard.stamp!.index, shard);
  }
  const wanted = stamped[0].stamp!;
  // The run history: the merged file is a run's results, listed by `rubricate view` like the run's own.
  const firstJudge = stamped[0].current?.record.judge?.id;
  const recording = startRunRecording(runIndexPath(flags.runIndex), { results: flags.out, command: 'merge', judges: firstJudge ? [firstJudge] : [] }, (message) => context.stderr(`warning: ${message}`));
  const items = { n: 0, ok: 0, error: 0, invalid: 0 };

  const writer = new JsonLinesWriter(flags.out);
  try {
    const gaps: Gap[] = [];
    const open: Gap[] = [];
    let previous: { line: number; file: string } | undefined;
    let grading: { key: string; file: string } | undefined;
    for (let ordinal = 0; ordinal < wanted.records; ordinal += 1) {
      const index = ordinal % wanted.count;
      const shard = byIndex.get(index);
      if (!shard?.current) {
        const gap: Gap = { shard: index, after: previous?.line };
        gaps.push(gap);
        open.push(gap);
        continue;
      }
      const { record, fileLine } = shard.current;
      if (previous && record.line <= previous.line) {
        throw refused(`${shard.file} line ${fileLine} (input line ${record.line}) comes after input line ${previous.line} of ${previous.file}: the shard files were changed or are not of this split`, { file: shard.file, line: fileLine, field: 'line' });
      }
      const key = gradingOf(record);
      if (key !== undefined) {
        if (grading && grading.key !== key) {
          throw refused(`${shard.file} was graded with another judge or scoring than ${grading.file} (judge ${record.judge?.id} ${record.judge?.template_version}, scoring ${record.scoring}): merge only the shards of one run`, { file: shard.file, line: fileLine, field: 'judge' });
        }
        grading ??= { key, file: shard.file };
      }
      for (const gap of open.splice(0)) gap.before = record.line;
      // The merged file is the unsharded run: its lines carry no shard.
      const { shard: _stamp, ...line } = record;
      await writer.write(line);
      countStatus(items, record.status);
      shard.taken += 1;
      previous = { line: record.line, file: shard.file };
      await advance(shard);
    }
    for (const shard of stamped) {
      if (shard.current) throw refused(`${shard.file} has more results than ${describeShard(shard.stamp!)} of a ${wanted.records}-record input holds (from its line ${shard.current.fileLine})`, { file: shard.file, line: shard.current.fileLine, field: 'shard' });
    }
    if (gaps.length > 0) throw incomplete(gaps, byIndex, wanted, emptyFiles);
  } catch (error) {
    // A failed merge leaves `--out` as it was (or absent).
    await writer.discard();
    recording?.end('failed', { error: RubricateError.isInstance(error) ? `${error.code}: ${error.message}` : String(error) });
    throw error;
  }
  await writer.close();
  recording?.end('finished', { items });
  context.stderr(`merged ${wanted.records} results from ${files.length} files (${wanted.count} shards) into ${flags.out}`);
  return exitCodes.success;
}
