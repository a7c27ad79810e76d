/**
 * Benchmark: the judge simulator's own CPU per request, so we know it is not the bottleneck
 * when it runs beside a grader on two cores.
 *
 *   node --import tsx bench/simulator/measure-cpu.ts [requests=3000] [concurrency=32]
 *
 * Sends HealthBench reference-layout requests (the largest prompts of the three dialects,
 * ~1,300 tokens each) and batched rubricate-dialect requests to a simulator in its own
 * process, then reads the simulator's CPU from its /__stats. Needs ../shared/data.
 */
import { existsSync } from 'node:fs';
import { runHealthBenchLayout, type HealthBenchLayoutItem } from '../reference-layout/run.js';
import { countCriteria, defaultHealthBenchFile, loadHealthBenchItems, type BenchItem } from '../support/healthbench.js';
import { measureSelf } from '../support/measure.js';
import { startSimulatorProcess } from '../support/simulator-process.js';
import { formatTable, type TableRow } from '../support/table.js';

const requestedCalls = Number(process.argv[2] ?? 3000);
const concurrency = Number(process.argv[3] ?? 32);

/** Repeats the items under fresh ids until they hold at least `calls` criteria. */
function repeatItems(items: readonly BenchItem[], calls: number): HealthBenchLayoutItem[] {
  const repeated: HealthBenchLayoutItem[] = [];
  let total = 0;
  for (let round = 0; total < calls; round += 1) {
    for (const item of items) {
      if (total >= calls) break;
      repeated.push({ ...item, id: `${item.id}#${round}` });
      total += item.criteria.length;
    }
  }
  return repeated;
}

/** A rubricate-dialect request grading all of an item's criteria in one call. */
function rubricateBatchBody(item: BenchItem, round: number): string {
  const nonce = (round * 7919 + item.id.length).toString(16).padStart(16, '0').slice(-16);
  const conversation = item.prompt.map((turn) => `${turn.role}: ${turn.content}`).join('\n\n');
  const criteria = item.criteria.map((criterion, index) => `<criterion id="c${index}" points="${criterion.points}">\n${criterion.text}\n</criterion>`);
  const content = [
    'Grade the response against every criterion below.',
    `<conversation-${nonce}>`,
    conversation,
    `</conversation-${nonce}>`,
    `<response-${nonce}>`,
    item.response,
    `</response-${nonce}>`,
    ...criteria,
  ].join('\n');
  return JSON.stringify({
    model: 'simulated',
    messages: [
      { role: 'system', content: 'You are a meticulous grader.' },
      { role: 'user', content },
    ],
    response_format: { type: 'json_schema', json_schema: { name: 'criteria_verdicts', schema: {} } },
  });
}

async function main(): Promise<void> {
  const file = defaultHealthBenchFile();
  if (!existsSync(file)) {
    console.log(`skipped: ${file} not found`);
    return;
  }
  const items = await loadHealthBenchItems(file);
  const simulator = await startSimulatorProcess({ fixedMs: 20 });
  const rows: TableRow[] = [];
  try {
    const layoutItems = repeatItems(items, requestedCalls);
    await simulator.reset();
    const layout = await runHealthBenchLayout({ items: layoutItems, simulatorUrl: simulator.url, concurrency });
    const layoutStats = await simulator.stats();
    rows.push({
      dialect: 'healthbench-layout',
      requests: layoutStats.completed,
      'input tokens/request': Math.round(layoutStats.inputTokens / layoutStats.completed),
      'cached share': layoutStats.cachedInputTokens / layoutStats.inputTokens,
      'wall s': layout.wallMs / 1000,
      'simulator cpu ms': layoutStats.cpuMs,
      'simulator cpu ms/request': layoutStats.cpuMsPerRequest,
      'client cpu ms/request': layout.cpuMs / layout.calls,
    });
    if (layout.mismatches.length > 0) console.log(`warning: ${layout.mismatches.length} verdict mismatches`);

    // Batched rubricate requests: one per item, all criteria at once (far fewer, larger replies).
    await simulator.reset();
    const bodies: string[] = [];
    for (let round = 0; bodies.length < Math.ceil(requestedCalls / 10); round += 1) {
      for (const item of items) bodies.push(rubricateBatchBody(item, round));
    }
    const started = performance.now();
    let next = 0;
    const worker = async () => {
      while (next < bodies.length) {
        const body = bodies[next];
        next += 1;
        const reply = await fetch(`${simulator.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        await reply.arrayBuffer();
        if (!reply.ok) throw new Error(`simulator answered ${reply.status}`);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const batchedStats = await simulator.stats();
    rows.push({
      dialect: 'rubricate (batched)',
      requests: batchedStats.completed,
      'input tokens/request': Math.round(batchedStats.inputTokens / batchedStats.completed),
      'cached share': batchedStats.cachedInputTokens / batchedStats.inputTokens,
      'wall s': (performance.now() - started) / 1000,
      'simulator cpu ms': batchedStats.cpuMs,
      'simulator cpu ms/request': batchedStats.cpuMsPerRequest,
    });
  } finally {
    await simulator.stop();
  }
  console.log(`items: ${items.length} HealthBench records (${countCriteria(items)} criteria), concurrency ${concurrency}, fixed latency 20 ms`);
  console.log(formatTable(rows, { decimals: 3 }));
  console.log(`driver peak RSS: ${measureSelf().peakRssMb} MB`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
