/**
 * Runs the HealthBench reference-layout client as its own process, so its CPU is measured
 * alone: `node --import tsx bench/reference-layout/main.ts '<JSON>'` where the JSON holds
 * `simulatorUrl`, `concurrency` and either `items` or `itemsFile` (a JSON array, or JSONL of
 * items), plus any other runHealthBenchLayout option. Prints one JSON line with the result
 * (maps as objects).
 */
import { safeParseJson } from '../../src/util/json.js';
import { readItemsFile } from '../support/items-file.js';
import { runHealthBenchLayout, type HealthBenchLayoutItem, type RunHealthBenchLayoutOptions } from './run.js';

async function main(): Promise<void> {
  const parsed = safeParseJson(process.argv[2] ?? '');
  if (!parsed.ok || !parsed.value || typeof parsed.value !== 'object') {
    process.stderr.write('reference-layout: the only argument must be a JSON object of options\n');
    process.exit(2);
  }
  const options = parsed.value as Partial<RunHealthBenchLayoutOptions> & { itemsFile?: string };
  const items = options.items ?? (options.itemsFile ? await readItemsFile<HealthBenchLayoutItem>(options.itemsFile) : []);
  const result = await runHealthBenchLayout({ ...(options as RunHealthBenchLayoutOptions), items });
  process.stdout.write(
    `${JSON.stringify({ ...result, verdicts: Object.fromEntries(result.verdicts), scores: Object.fromEntries(result.scores) })}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`reference-layout: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
