/** Input flags shared by the commands that read items (grade, probe, convert). */
import type { Command } from 'commander';
import type { ImportOptions } from '../rubric/formats/types.js';
import type { CommandContext } from './context.js';
import { loadRubrics } from './rubrics-file.js';

export interface InputFlags {
  format: string;
  input: string;
  responses?: string;
  responseFrom?: string;
  rubrics?: string;
  examples?: string;
}

export function addInputOptions(command: Command, { formatHelp, responseFromVerb }: { formatHelp: string; responseFromVerb: string }): Command {
  return command
    .option('--format <name>', formatHelp, 'items')
    .requiredOption('--input <file>', 'input file')
    .option('--responses <file>', 'responses JSONL joined onto the examples (formats that carry no responses)')
    .option('--response-from <source>', `healthbench: ${responseFromVerb} the physicians' ideal completions ("ideal")`)
    .option('--rubrics <file>', 'rubrics (JSONL or JSON list, each with an id) for items that give rubric_id')
    .option('--examples <file>', 'examples file to take item tags from');
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
  };
  if (flags.rubrics) options.rubrics = await loadRubrics(flags.rubrics);
  return options;
}
