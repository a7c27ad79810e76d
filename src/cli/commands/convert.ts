import type { Command } from 'commander';
import { checkFiles, JsonLinesWriter } from '../../util/files.js';
import { quietHelp, reportInputError, type CommandContext } from '../context.js';
import { organizeHelp } from '../help.js';
import { getItemImporter, getResultsImporter, itemImporters, resultsImporters } from '../../formats/index.js';
import { RubricateError, exitCodes } from '../../errors.js';
import { addInputOptions, importOptionsFrom, refuseInapplicableFlags, type InputFlags } from '../input-options.js';

interface ConvertFlags extends InputFlags {
  out: string;
  quiet?: boolean;
}

export function registerConvertCommand(program: Command, context: CommandContext): void {
  const command = program.command('convert').description('convert a benchmark file to canonical items JSONL (or graded results, for results formats)');
  addInputOptions(command, { formatHelp: `input format (${[...itemImporters.names(), ...resultsImporters.names()].join(', ')})`, responseFromVerb: 'use' });
  command.requiredOption('--out <file>', 'output JSONL').option('--quiet', quietHelp);
  organizeHelp(command, [
    'rubricate convert --format healthbench --input examples/healthbench/examples.jsonl --out hb-items.jsonl',
    'rubricate convert --format researchrubrics --input examples/researchrubrics/tasks.csv --out rr-items.jsonl',
  ]).action(async (flags: ConvertFlags) => {
    context.exitCode = await runConvert(flags, context);
  });
}

async function runConvert(flags: ConvertFlags, context: CommandContext): Promise<number> {
  if (itemImporters.has(flags.format)) refuseInapplicableFlags(flags, getItemImporter(flags.format));
  else if (resultsImporters.has(flags.format)) refuseInapplicableFlags(flags, getResultsImporter(flags.format));
  checkFiles({
    inputs: [{ flag: 'input', path: flags.input }, { flag: 'responses', path: flags.responses }, { flag: 'rubrics', path: flags.rubrics }, { flag: 'examples', path: flags.examples }],
    outputs: [{ flag: 'out', path: flags.out }],
  });
  // Records without responses are written as rubric-only items (grade them later with --responses).
  const options = { ...(await importOptionsFrom(flags, context)), withoutResponses: true };
  const writer = new JsonLinesWriter(flags.out);
  let written = 0;
  let invalid = 0;
  let rubricOnly = 0;
  try {
    if (itemImporters.has(flags.format)) {
      for await (const record of getItemImporter(flags.format).read(flags.input, options)) {
        if (record.kind === 'invalid') {
          invalid += 1;
          reportInputError(context, record.error);
          continue;
        }
        const { item } = record;
        if (record.withoutResponse) rubricOnly += 1;
        await writer.write({
          id: item.id,
          prompt: item.prompt,
          ...(record.withoutResponse ? {} : { response: item.response }),
          rubric: item.rubric,
          ...(item.reference !== undefined ? { reference: item.reference } : {}),
          ...(item.tags ? { tags: item.tags } : {}),
          ...(item.metadata ? { metadata: item.metadata } : {}),
        });
        written += 1;
      }
    } else if (resultsImporters.has(flags.format)) {
      for await (const entry of getResultsImporter(flags.format).read(flags.input, options)) {
        if (entry.kind === 'invalid') {
          invalid += 1;
          reportInputError(context, entry.error);
          continue;
        }
        await writer.write(entry.record);
        written += 1;
      }
    } else {
      throw new RubricateError('CONFIG_INVALID', `unknown format "${flags.format}" (known: ${[...itemImporters.names(), ...resultsImporters.names()].join(', ')})`, { field: 'format' });
    }
  } catch (error) {
    await writer.discard();
    throw error;
  }
  await writer.close();
  if (!flags.quiet) {
    context.stderr(`wrote ${written} records to ${flags.out}${invalid ? ` (${invalid} invalid input records skipped)` : ''}`);
    if (rubricOnly > 0) {
      context.stderr(`${rubricOnly} of them have a rubric but no response: grade them with rubricate grade --format items --input ${flags.out} --responses FILE (JSONL {id, response})`);
    }
  }
  return invalid > 0 ? exitCodes.itemsFailed : exitCodes.success;
}
