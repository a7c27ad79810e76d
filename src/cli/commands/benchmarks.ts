/**
 * `rubricate benchmarks`: the benchmark packs `--benchmark` takes, with their sizes counted from
 * the data present, and the judge calls and cost of a full run at each pack's default judge
 * (the dry run's count, `pipeline/benchmark-estimate.ts`). See docs/benchmark-packs.md.
 */
import type { Command } from 'commander';
import { exitCodes } from '../../errors.js';
import { defaultPrices, loadPriceTable, type ModelPrice } from '../../engine/usage.js';
import { assumedResponseWords, countBenchmark, estimateBenchmark, estimatedCriteria, type BenchmarkEstimate, type BenchmarkSize } from '../../pipeline/benchmark-estimate.js';
import { benchmarkPacks, findBenchmark, type ResolvedBenchmark } from '../../pipeline/benchmark-packs.js';
import { checkFiles } from '../../util/files.js';
import type { CommandContext } from '../context.js';
import { organizeHelp } from '../help.js';
import { ProgressReporter } from '../progress.js';

interface BenchmarksFlags {
  json?: boolean;
  prices?: string;
}

/** One line of the listing: a pack or one of its subsets. */
export interface BenchmarkListing {
  benchmark: string;
  title: string;
  format: string;
  scoring: string;
  protocol: string;
  judge: string;
  judge_source: 'reference' | 'rubricate';
  responses: string;
  /** The data file used, relative to the data folder, or null when none is present. */
  data: string | null;
  sample: string | null;
  size: BenchmarkSize | null;
  estimate: BenchmarkEstimate | null;
}

export function registerBenchmarksCommand(program: Command, context: CommandContext): void {
  const command = program
    .command('benchmarks')
    .description('list the benchmark packs --benchmark takes: items and criteria (counted from the data present), and the judge calls and cost a full run takes at the default judge')
    .argument('[names...]', 'only these packs (NAME or NAME:SUBSET)')
    .option('--json', 'one JSON array on stdout instead of the table')
    .option('--prices <file>', 'price table (JSON/YAML {model: {input, cached_input, output}} in USD per 1M tokens) instead of rubricate\'s own');
  organizeHelp(command, ['rubricate benchmarks', 'rubricate benchmarks healthbench:consensus --json']);
  command.action(async (names: string[], flags: BenchmarksFlags) => {
    context.exitCode = await runBenchmarks(names, flags, context);
  });
}

async function runBenchmarks(names: string[], flags: BenchmarksFlags, context: CommandContext): Promise<number> {
  checkFiles({ inputs: [{ flag: 'prices', path: flags.prices }], outputs: [] });
  const prices = flags.prices ? loadPriceTable(flags.prices) : defaultPrices;
  const wanted = names.length > 0 ? names.map((name) => findBenchmark(name)) : allBenchmarks();
  const listings = await listingsOf(wanted, prices, process.stderr);
  if (flags.json) context.stdout(JSON.stringify(listings, null, 2));
  else context.stdout(formatListings(listings, Boolean(flags.prices)));
  return exitCodes.success;
}

/**
 * Each pack's listing, counted one after the other (a large pack's count and estimate take a
 * while): a bar of packs on a terminal, nothing elsewhere, as the other commands' progress.
 */
export async function listingsOf(wanted: readonly ResolvedBenchmark[], prices: Readonly<Record<string, ModelPrice>>, stream: NodeJS.WriteStream): Promise<BenchmarkListing[]> {
  const progress = new ProgressReporter(ProgressReporter.displayFor(stream, false), 'counting benchmark packs', { stream, itemsOnly: true });
  progress.setTotal(wanted.length);
  const listings: BenchmarkListing[] = [];
  try {
    for (const resolved of wanted) {
      listings.push(await listingOf(resolved, prices));
      progress.onEvent({ type: 'item', status: 'ok' });
    }
  } finally {
    progress.stop();
  }
  return listings;
}

function allBenchmarks(): ResolvedBenchmark[] {
  return benchmarkPacks.values().flatMap((pack) => [findBenchmark(pack.name), ...Object.keys(pack.subsets ?? {}).map((subset) => findBenchmark(`${pack.name}:${subset}`))]);
}

async function listingOf(resolved: ResolvedBenchmark, prices: Readonly<Record<string, ModelPrice>>): Promise<BenchmarkListing> {
  const { pack, file, candidate } = resolved;
  const size = file ? await countBenchmark(file, pack) : null;
  const estimate = file && size ? await estimateBenchmark(file, pack, size, prices) : null;
  return {
    benchmark: resolved.label,
    title: pack.title,
    format: pack.format,
    scoring: pack.scoring,
    protocol: pack.protocol,
    judge: pack.judge,
    judge_source: pack.judgeSource,
    responses: pack.responses,
    data: candidate?.path ?? null,
    sample: candidate?.sample ?? null,
    size,
    estimate,
  };
}

const count = (value: number) => value.toLocaleString('en-US');
const dollars = (value: number | null) => (value === null ? 'price unknown' : `$${value.toFixed(2)}`);

function formatListings(listings: readonly BenchmarkListing[], ownPrices: boolean): string {
  const rows = listings.map((listing) => {
    const judge = `${listing.judge}${listing.judge === 'none' ? ' (checks only)' : listing.judge_source === 'reference' ? ' (the reference\'s)' : ' (rubricate\'s choice)'}`;
    if (!listing.size || !listing.estimate) return [listing.benchmark, 'data not present', '', '', judge, '', ''];
    const { size, estimate } = listing;
    const cost = estimate.calls === 0 ? '$0' : `${dollars(estimate.cost_usd.synchronous)} (batch ${dollars(estimate.cost_usd.batch)})`;
    const data = `${listing.data}${listing.sample ? ` (sample: ${listing.sample})` : ''}`;
    return [listing.benchmark, count(size.items), count(size.criteria), count(estimate.calls), judge, cost, data];
  });
  const table = [['benchmark', 'items', 'criteria', 'judge calls', 'default judge', 'full run cost', 'data'], ...rows];
  const widths = table[0].map((_, column) => Math.max(...table.map((row) => row[column].length)));
  const lines = table.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]))).join('  ').trimEnd());
  const models = [...new Set(listings.flatMap((listing) => (listing.estimate?.model ? [listing.estimate] : [])).map((estimate) => estimate.model as string))];
  const priced = models.map((model) => {
    const price = listings.find((listing) => listing.estimate?.model === model)?.estimate?.price;
    return price ? `${model} $${price.input} in / $${price.output} out` : `${model} (not in the price table)`;
  });
  const directory = findBenchmark(benchmarkPacks.names()[0]).dataDirectory;
  return [
    ...lines,
    '',
    `data folder: ${directory} (RUBRICATE_DATA_DIR); a pack whose data is not present: \`npm run data:fetch\`, or \`rubricate grade --benchmark NAME\` says where to get it`,
    `cost: ${ownPrices ? 'your --prices table' : 'rubricate\'s price table'}, USD per 1M tokens${priced.length > 0 ? ` (${priced.join('; ')})` : ''}; each response assumed ${assumedResponseWords} words; calls and tokens counted by the dry run on each pack's first items (up to ${count(estimatedCriteria)} judged criteria) and the rest scaled by their criteria; no cache hits assumed`,
  ].join('\n');
}
