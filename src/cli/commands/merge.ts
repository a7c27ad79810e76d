import type { Command } from 'commander';
import { RubricateError, exitCodes } from '../../errors.js';
import { JsonLinesWriter } from '../../util/files.js';
import { readResults, type ResultReadRecord, type ResultRecord } from '../../results/results.js';
import { organizeHelp } from '../help.js';
import type { CommandContext } from '../context.js';

interface MergeFlags {
  out: string;
}

interface Head {
  file: string;
  lines: AsyncGenerator<ResultReadRecord>;
  current?: { inputLine: number; record: ResultRecord; fileLine: number };
}

/**
 * `rubricate merge`: joins the results of `grade --shard I/N` runs into one file in input
 * order (each shard is already ordered by input line; this is a k-way merge, streaming).
 */
export function registerMergeCommand(program: Command, context: CommandContext): void {
  organizeHelp(
    program
      .command('merge')
      .description('join results files from `grade --shard I/N` into one file in input order')
      .argument('<files...>', 'the shards\' results files')
      .requiredOption('--out <file>', 'merged results JSONL'),
    [
      'rubricate merge shard-0.jsonl shard-1.jsonl --out results.jsonl',
      'rubricate merge /results/shard-*.jsonl --out results.jsonl',
    ],
  )
    .action(async (files: string[], flags: MergeFlags) => {
      context.exitCode = await runMerge(files, flags, context);
    });
}

async function advance(head: Head): Promise<void> {
  const next = await head.lines.next();
  if (next.done) {
    head.current = undefined;
    return;
  }
  // Read through the results line's schema: a shard's line comes out byte-identical.
  if (next.value.kind === 'invalid') throw next.value.error;
  const { record } = next.value;
  const inputLine = record.line;
  if (typeof inputLine !== 'number') throw new RubricateError('INPUT_INVALID', 'not a rubricate results line with its input "line" number', { file: head.file, line: next.value.line, field: 'line' });
  if (head.current && inputLine <= head.current.inputLine) throw new RubricateError('INPUT_INVALID', `input lines out of order (${inputLine} after ${head.current.inputLine}): not one shard's results`, { file: head.file, line: next.value.line, field: 'line' });
  head.current = { inputLine, record, fileLine: next.value.line };
}

async function runMerge(files: string[], flags: MergeFlags, context: CommandContext): Promise<number> {
  if (files.includes(flags.out)) throw new RubricateError('CONFIG_INVALID', `--out ${flags.out} is one of the inputs`, { field: 'out' });
  const heads: Head[] = files.map((file) => ({ file, lines: readResults(file) }));
  for (const head of heads) await advance(head);
  const writer = new JsonLinesWriter(flags.out);
  let written = 0;
  let seen: { line: number; file: string } | undefined;
  try {
    for (;;) {
      let best: Head | undefined;
      for (const head of heads) if (head.current && (!best || head.current.inputLine < best.current!.inputLine)) best = head;
      if (!best) break;
      const current = best.current!;
      if (seen && seen.line === current.inputLine) {
        throw new RubricateError('INPUT_INVALID', `input line ${current.inputLine} appears in two shards (also in ${seen.file})`, { file: best.file, line: current.fileLine, field: 'line' });
      }
      seen = { line: current.inputLine, file: best.file };
      await writer.write(current.record);
      written += 1;
      await advance(best);
    }
  } finally {
    await writer.close();
  }
  context.stderr(`merged ${written} results from ${files.length} files into ${flags.out}`);
  return exitCodes.success;
}
