/**
 * `--benchmark NAME[:SUBSET]`: a benchmark pack (`pipeline/benchmark-packs.ts`) gives a command
 * its input file and format, and the defaults of the settings the user left unset (judge,
 * scoring, grader protocol). Any command that reads items can take it: add the option, then call
 * `applyBenchmark` at the top of its action, before its flags and run spec are read.
 */
import type { Command } from 'commander';
import { RubricateError } from '../errors.js';
import { benchmarkPacks, findBenchmark, packSettings, type ResolvedBenchmark } from '../pipeline/benchmark-packs.js';
import { fetchBenchmarkData } from './benchmark-fetch.js';

export function addBenchmarkOption(command: Command): Command {
  return command
    .option('--benchmark <name>', `a benchmark pack, NAME or NAME:SUBSET (${benchmarkPacks.names().join(', ')}; \`rubricate benchmarks\` lists them): its data file from RUBRICATE_DATA_DIR, its format, scoring, grader protocol and default judge`)
    .option('--fetch-data', "with --benchmark: download the pack's data file when it is missing, checked as `npm run data:fetch` checks it (needs python3)");
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
export async function applyBenchmark(command: Command, say: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): Promise<ResolvedBenchmark | undefined> {
  const spec = command.getOptionValue('benchmark') as string | undefined;
  if (spec === undefined) {
    if (command.getOptionValue('fetchData') === true) throw new RubricateError('CONFIG_INVALID', '--fetch-data fetches a benchmark pack\'s data: give --benchmark NAME with it, or leave it out', { field: 'fetch-data' });
    return undefined;
  }
  let resolved = findBenchmark(spec);
  if (resolved.file === undefined && command.getOptionValue('fetchData') === true) {
    await fetchBenchmarkData(resolved, say);
    resolved = findBenchmark(spec);
  }
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
