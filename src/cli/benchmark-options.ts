/**
 * `--benchmark NAME[:SUBSET]`: a benchmark pack (`pipeline/benchmark-packs.ts`) gives a command
 * its input file and format, and the defaults of the settings the user left unset (judge,
 * scoring, grader protocol). Any command that reads items can take it: add the option, then call
 * `applyBenchmark` at the top of its action, before its flags and run spec are read.
 */
import type { Command } from 'commander';
import { RubricateError } from '../errors.js';
import { benchmarkPacks, findBenchmark, packSettings, type ResolvedBenchmark } from '../pipeline/benchmark-packs.js';

export function addBenchmarkOption(command: Command): Command {
  return command.option('--benchmark <name>', `a benchmark pack, NAME or NAME:SUBSET (${benchmarkPacks.names().join(', ')}; \`rubricate benchmarks\` lists them): its data file from RUBRICATE_DATA_DIR, its format, scoring, grader protocol and default judge`);
}

/** Flags a pack sets itself: giving one as well is refused, naming it. */
const setByPack = ['input', 'format'] as const;

const givenByUser = (command: Command, attribute: string) => {
  const source = command.getOptionValueSource(attribute);
  return source !== undefined && source !== 'default';
};

/**
 * Applies `--benchmark` to a parsed command: `--input` and `--format` set from the pack, each
 * default (`--judge`, `--scoring`, `--judge-protocol`) set only where the command has that option
 * and the user did not give it. Returns the pack, or undefined without `--benchmark`.
 */
export function applyBenchmark(command: Command): ResolvedBenchmark | undefined {
  const spec = command.getOptionValue('benchmark') as string | undefined;
  if (spec === undefined) return undefined;
  const resolved = findBenchmark(spec);
  for (const attribute of setByPack) {
    if (givenByUser(command, attribute)) {
      throw new RubricateError('CONFIG_INVALID', `--benchmark ${spec} gives the ${attribute === 'input' ? 'input file' : 'input format'} (${attribute === 'input' ? 'its data file' : resolved.pack.format}): leave out --${attribute}, or leave out --benchmark`, { field: attribute });
    }
  }
  const settings = packSettings(resolved);
  command.setOptionValueWithSource('input', settings.input, 'implied');
  command.setOptionValueWithSource('format', settings.format, 'implied');
  const options = new Set(command.options.map((option) => option.attributeName()));
  for (const [attribute, value] of Object.entries(settings.defaults)) {
    if (options.has(attribute) && !givenByUser(command, attribute)) command.setOptionValueWithSource(attribute, value, 'implied');
  }
  return resolved;
}
