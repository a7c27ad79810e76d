/**
 * Runs the promptfoo harness as its own process:
 * `node --import tsx bench/promptfoo/main.ts '<JSON>'` where the JSON holds `simulatorUrl`,
 * `concurrency` and either `items` or `itemsFile` (JSON array or JSONL of
 * `{id, response, criteria: string[]}`), plus any other runPromptfoo option; or
 * `{"installOnly": true}` to install promptfoo and exit. Prints one JSON line (maps as objects).
 */
import { safeParseJson } from '../../src/util/json.js';
import { readItemsFile } from '../support/items-file.js';
import type { PromptfooItem } from './config.js';
import { ensurePromptfoo } from './install.js';
import { runPromptfoo, type RunPromptfooOptions } from './run.js';

async function main(): Promise<void> {
  const parsed = safeParseJson(process.argv[2] ?? '');
  if (!parsed.ok || !parsed.value || typeof parsed.value !== 'object') {
    process.stderr.write('promptfoo harness: the only argument must be a JSON object of options\n');
    process.exit(2);
  }
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const options = parsed.value as Partial<RunPromptfooOptions> & { itemsFile?: string; installOnly?: boolean };
  if (options.installOnly) {
    const install = await ensurePromptfoo({ installDirectory: options.installDirectory, log });
    process.stdout.write(`${JSON.stringify(install)}\n`);
    process.exit(install.ok ? 0 : 1);
  }
  const items = options.items ?? (options.itemsFile ? await readItemsFile<PromptfooItem>(options.itemsFile) : []);
  const result = await runPromptfoo({ ...(options as RunPromptfooOptions), items, log });
  process.stdout.write(`${JSON.stringify({ ...result, verdicts: Object.fromEntries(result.verdicts) })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`promptfoo harness: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
