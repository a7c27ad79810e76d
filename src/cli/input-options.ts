/** Input flags shared by the commands that read items (grade, probe, convert). */
import type { Command } from 'commander';
import { RubricateError } from '../errors.js';
import { ImageReader } from '../images/reader.js';
import type { ImportOptionName, ImportOptions } from '../formats/types.js';
import type { CommandContext } from './context.js';
import { loadRubrics } from './rubrics-file.js';
import { parsePositiveInteger } from './run-spec-flags.js';

export interface InputFlags {
  format: string;
  input: string;
  responses?: string;
  responseFrom?: string;
  rubrics?: string;
  examples?: string;
  imageRoot?: string[];
  allowPrivateImageUrls?: boolean;
  /** The command's `--dry-run`, where it has one: image URLs are then counted, not fetched. */
  dryRun?: boolean;
}

export function addInputOptions(command: Command, { formatHelp, responseFromVerb, inputFrom }: { formatHelp: string; responseFromVerb: string; /** Another option that gives the input (`--benchmark`): `--input` is then checked by the command. */ inputFrom?: string }): Command {
  return (inputFrom ? command.option('--input <file>', `input file (or ${inputFrom})`) : command.requiredOption('--input <file>', 'input file'))
    .option('--format <name>', formatHelp, 'items')
    .option('--responses <file>', 'responses JSONL joined onto the examples (formats that carry no responses)')
    .option('--response-from <source>', `healthbench: ${responseFromVerb} the physicians' ideal completions ("ideal")`)
    .option('--rubrics <file>', 'rubrics (JSONL or JSON list, each with an id) for items that give rubric_id')
    .option('--examples <file>', 'examples file to take item tags from')
    .option('--image-root <dir>', 'a folder image paths in items may name besides the input file\'s own (repeatable)', (dir: string, dirs: string[] = []) => [...dirs, dir])
    .option('--allow-private-image-urls', 'let image URLs in items reach loopback, private, link-local and other non-public addresses (a local image server)');
}

/** Import options from the flags; warnings go to stderr (and to `warnings` when given). */
export async function importOptionsFrom(flags: InputFlags, context: CommandContext, warnings?: string[]): Promise<ImportOptions> {
  const options: ImportOptions = {
    responses: flags.responses,
    responseFrom: flags.responseFrom,
    examples: flags.examples,
    onWarning: (message) => {
      warnings?.push(message);
      context.stderr(`warning: ${message}`);
    },
    images: await ImageReader.open({ roots: flags.imageRoot, allowPrivateAddresses: flags.allowPrivateImageUrls, reading: flags.dryRun ? 'dry-run' : 'read', signal: context.signal }),
  };
  if (flags.rubrics) options.rubrics = await loadRubrics(flags.rubrics);
  return options;
}

const flagNames: Record<ImportOptionName, string> = {
  responses: 'responses',
  responseFrom: 'response-from',
  rubrics: 'rubrics',
  examples: 'examples',
  imageRoot: 'image-root',
  allowPrivateImageUrls: 'allow-private-image-urls',
};

/** A side-input flag the format does not use is an error (it would otherwise be silently ignored). */
export function refuseInapplicableFlags(flags: Partial<Record<ImportOptionName, unknown>>, format: { name: string; accepts?: readonly ImportOptionName[] }): void {
  if (!format.accepts) return;
  for (const option of Object.keys(flagNames) as ImportOptionName[]) {
    if (flags[option] === undefined || format.accepts.includes(option)) continue;
    const usable = format.accepts.map((name) => `--${flagNames[name]}`);
    throw new RubricateError('CONFIG_INVALID', `--${flagNames[option]} does not apply to --format ${format.name}${usable.length > 0 ? ` (it takes ${usable.join(', ')})` : ''}`, { field: flagNames[option] });
  }
}

/**
 * `--limit N` (grade, compare): a smoke run reads and grades only the input's first N records. It
 * is an input setting, like `--shard`, not part of the run spec: the records it leaves out are
 * never read, and the ones it keeps are graded exactly as in a full run.
 */
export function addLimitOption(command: Command): Command {
  return command.option('--limit <n>', 'smoke run: only the first N records of the input are read and graded', parsePositiveInteger('limit'));
}

/** The first `limit` records (all of them when no limit is set); the source is closed once they are read. */
export async function* firstRecords<T>(records: AsyncIterable<T>, limit: number | undefined): AsyncGenerator<T> {
  if (limit === undefined) return yield* records;
  if (limit <= 0) return;
  let taken = 0;
  for await (const record of records) {
    yield record;
    taken += 1;
    if (taken >= limit) return;
  }
}
