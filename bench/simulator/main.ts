/**
 * Runs the judge simulator as its own process, so a benchmark can measure graders without the
 * simulator's CPU mixed in: `node --import tsx bench/simulator/main.ts '<options JSON>'`.
 * The first stdout line is `{"url": …, "port": …, "pid": …}`; it serves until SIGTERM/SIGINT.
 */
import { safeParseJson } from '../../src/util/json.js';
import { startSimulator } from './server.js';
import type { SimulatorOptions } from './types.js';

async function main(): Promise<void> {
  const argument = process.argv[2] ?? '{}';
  const parsed = safeParseJson(argument);
  if (!parsed.ok || !parsed.value || typeof parsed.value !== 'object' || Array.isArray(parsed.value)) {
    process.stderr.write(`simulator: the only argument must be a JSON object of options (${parsed.ok ? 'not an object' : parsed.error})\n`);
    process.exit(2);
  }
  const simulator = await startSimulator(parsed.value as SimulatorOptions);
  process.stdout.write(`${JSON.stringify({ url: simulator.url, port: simulator.port, pid: process.pid })}\n`);
  const stop = () => {
    simulator.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`simulator: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
