/**
 * `npm run bench [-- scenario …]`: runs the benchmark scenarios, each in its own process
 * against the judge simulator (also its own process), and prints one table plus the
 * side-by-side ratios. Results also go to bench/out/latest.{json,md}.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { runChild, scenarioNames } from './scenarios.js';
import { formatMarkdownTable, formatTable } from './support/table.js';

type Row = Record<string, unknown>;

const defaultOrder = ['overhead', 'cpu', 'healthbench', 'groups', 'ratelimited', 'scale', 'scale-curve', 'serve-scale', 'startup', 'promptfoo', 'checks', 'llamacpp', 'server', 'serve-vs-hono', 'replicas', 'trainers', 'report', 'anthropic-caching', 'local-judge', 'otel-import', 'sqlite-drivers'];

function round(value: unknown, digits = 3): string | number {
  if (typeof value !== 'number') return value === null || value === undefined ? '–' : String(value);
  if (Number.isInteger(value)) return value;
  return Number(value.toFixed(digits));
}

function gradingTableRow(row: Row): Record<string, string | number> {
  return {
    scenario: String(row.scenario),
    'wall s': round(row.wall_s, 2),
    'ideal s': round(row.ideal_s, 2),
    'overhead ×': round(row.overhead_ratio, 3),
    calls: round(row.calls),
    'input tok/criterion': round(row.input_tokens_per_criterion, 1),
    'cached input': typeof row.cached_input_share === 'number' ? `${(row.cached_input_share * 100).toFixed(1)}%` : '–',
    'output tok': round(row.output_tokens),
    'peak RSS MB': round(row.peak_rss_mb, 0),
    'CPU ms/call': round(row.cpu_ms_per_call, 3),
    'ok/error': row.items_ok === null || row.items_ok === undefined ? '–' : `${row.items_ok}/${row.items_error}`,
  };
}

async function main(): Promise<void> {
  const requested = process.argv.slice(2);
  const names = requested.length > 0 ? requested : defaultOrder;
  for (const name of names) if (!scenarioNames.includes(name)) throw new Error(`unknown scenario "${name}" (known: ${scenarioNames.join(', ')})`);
  const started = Date.now();
  {
    // rubricate is measured as an installed package runs it: built, no tsx.
    process.stderr.write('— building dist …\n');
    execFileSync(process.execPath, ['--import', 'tsx', resolve(process.cwd(), 'scripts/build.ts')], { stdio: 'inherit' });
  }
  const results: Record<string, unknown> = {};
  for (const name of names) {
    process.stderr.write(`— ${name} …\n`);
    const began = Date.now();
    try {
      results[name] = await runChild([name]);
    } catch (error) {
      results[name] = { scenario: name, failed: String(error) };
    }
    process.stderr.write(`  done in ${((Date.now() - began) / 1000).toFixed(1)} s\n`);
  }

  const gradingRows: Row[] = [];
  for (const name of ['overhead', 'overhead-fast', 'bare-client', 'healthbench', 'ratelimited', 'promptfoo']) {
    const value = results[name];
    if (value === undefined) continue;
    for (const row of Array.isArray(value) ? value : [value]) gradingRows.push(row as Row);
  }
  const printable = gradingRows.filter((row) => !row.skipped && !row.failed).map(gradingTableRow);
  const lines: string[] = [];
  const machine = `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}`;
  lines.push(`rubricate benchmarks — ${new Date().toISOString().slice(0, 10)} — ${machine}`);
  lines.push('Absolute times are noisy (shared machine); compare ratios.', '');
  if (printable.length > 0) lines.push(formatTable(printable), '');
  for (const row of gradingRows.filter((entry) => entry.skipped || entry.failed)) lines.push(`${row.scenario}: ${row.skipped ? `skipped — ${row.skipped}` : `FAILED — ${row.failed}`}`);

  // Side by side: rubricate / promptfoo and rubricate / HealthBench reference layout.
  const find = (scenario: string) => gradingRows.find((row) => row.scenario === scenario);
  const ratios: Array<Record<string, string | number>> = [];
  const ours = find('rubricate CLI (vs promptfoo)');
  const promptfoo = find('promptfoo 0.121.20 llm-rubric');
  if (ours && promptfoo) {
    ratios.push({ comparison: 'wall time rubricate ÷ promptfoo', ratio: round((ours.wall_s as number) / (promptfoo.wall_s as number), 3), target: '≤ 0.5' });
    ratios.push({ comparison: 'CPU per call rubricate ÷ promptfoo', ratio: round((ours.cpu_ms_per_call as number) / (promptfoo.cpu_ms_per_call as number), 3), target: '≤ 0.5' });
    ratios.push({ comparison: 'calls rubricate ÷ promptfoo', ratio: round((ours.calls as number) / (promptfoo.calls as number), 3), target: '' });
  }
  const reference = find('HealthBench reference layout');
  if (reference) {
    for (const mode of ['healthbench per-criterion', 'healthbench batched 4', 'healthbench batched all', 'healthbench holistic']) {
      const row = find(mode);
      if (!row) continue;
      ratios.push({
        comparison: `input tokens/criterion ${mode.replace('healthbench ', '')} ÷ reference`,
        ratio: round((row.input_tokens_per_criterion as number) / (reference.input_tokens_per_criterion as number), 3),
        target: mode.includes('batched') ? '≤ 0.35' : '',
      });
      ratios.push({ comparison: `calls ${mode.replace('healthbench ', '')} ÷ reference`, ratio: round((row.calls as number) / (reference.calls as number), 3), target: '' });
    }
  }
  const perCriterion = find('healthbench per-criterion');
  if (perCriterion) ratios.push({ comparison: 'prefix-cache share of input, per-criterion', ratio: `${(((perCriterion.cached_input_share as number) ?? 0) * 100).toFixed(1)}%`, target: '≥ 80%' });
  const overhead = find('overhead');
  if (overhead) {
    ratios.push({ comparison: 'overhead: wall ÷ judge-bound ideal', ratio: round(overhead.overhead_ratio, 3), target: '≤ 1.05' });
    ratios.push({ comparison: 'overhead: grader CPU ms per judge call', ratio: round(overhead.cpu_ms_per_call, 3), target: '≤ 0.6' });
    if (typeof overhead.cpu_main_ms_per_call === 'number') {
      ratios.push({ comparison: 'overhead: of which main thread / other threads (JIT, GC)', ratio: `${round(overhead.cpu_main_ms_per_call, 3)} / ${round(overhead.cpu_other_threads_ms_per_call, 3)}`, target: '' });
    }
  }
  const cpu = results.cpu as Record<string, number> | undefined;
  if (cpu && typeof cpu.rubricate_3000 === 'number') {
    ratios.push({ comparison: 'CPU ms/call at 3,000 calls (incl. warm-up), 5 ms judge', ratio: round(cpu.rubricate_3000, 3), target: '≤ 0.6' });
    ratios.push({ comparison: 'CPU ms/call marginal (12,000 − 3,000 calls)', ratio: round(cpu.rubricate_marginal, 3), target: '' });
    ratios.push({ comparison: 'CPU ms/call, bare node:http client, same requests', ratio: round(cpu.bare_client_3000, 3), target: '' });
    ratios.push({ comparison: 'one-time warm-up CPU, s', ratio: round(cpu.warmup_cpu_s, 2), target: '' });
  }
  const serve = results['serve-vs-hono'] as { ratio?: number; rubricate?: Array<{ serverCpuMsPerRequest: number }>; bareHono?: Array<{ serverCpuMsPerRequest: number }>; uncached?: { serverCpuMsPerReward: number } } | undefined;
  if (serve && typeof serve.ratio === 'number') {
    const meanCpu = (runs: Array<{ serverCpuMsPerRequest: number }> = []) => runs.reduce((sum, run) => sum + run.serverCpuMsPerRequest, 0) / Math.max(1, runs.length);
    ratios.push({ comparison: 'serve: cached rewards/s ÷ bare Hono', ratio: round(serve.ratio, 3), target: '≥ 0.95' });
    ratios.push({ comparison: 'serve: CPU per cached request ÷ bare Hono', ratio: round(meanCpu(serve.rubricate) / meanCpu(serve.bareHono), 3), target: '' });
    if (serve.uncached) ratios.push({ comparison: 'serve: CPU ms per uncached reward (8 criteria)', ratio: round(serve.uncached.serverCpuMsPerReward, 3), target: '≤ 1.0' });
  }
  const limited = find('ratelimited');
  if (limited) ratios.push({ comparison: 'ratelimited: wall ÷ capacity-bound ideal (failed items)', ratio: `${round(limited.overhead_ratio, 3)} (${limited.items_error})`, target: 'failed 0' });
  if (ratios.length > 0) lines.push(formatTable(ratios), '');

  const scale = results.scale;
  if (Array.isArray(scale)) {
    lines.push(formatTable(scale.map((row: Row) => ({ scenario: String(row.scenario), items: round(row.items), 'wall s': round(row.wall_s, 2), 'µs/item': round(row.us_per_item, 1), 'peak RSS MB': round(row.peak_rss_mb, 0), 'judge calls': round(row.calls), 'cache hits': round(row.cache_hits) }))), '');
  }
  const curve = results['scale-curve'];
  if (Array.isArray(curve)) {
    lines.push(formatTable(curve.map((row: Row) => ({ scenario: String(row.scenario), calls: round(row.calls), 'wall s': round(row.wall_s, 2), 'CPU ms/call': round(row.cpu_ms_per_call, 3), 'peak RSS MB': round(row.peak_rss_mb, 0), 'live heap MB': round(row.live_heap_mb, 0), 'output MB': round(row.output_mb, 1), 'ok/error': `${(row.items as number) - (row.items_error as number)}/${round(row.items_error)}`, load: String(row.load) }))), '');
  }
  const serveCurve = results['serve-scale'];
  if (Array.isArray(serveCurve)) {
    lines.push(formatTable(serveCurve.map((row: Row) => ({ scenario: String(row.scenario), 'wall s': round(row.wall_s, 1), 'rewards/s': round(row.rewards_per_s, 0), 'serve CPU ms/reward': round(row.serve_cpu_ms_per_reward, 3), 'serve peak RSS MB': round(row.peak_rss_mb, 0), 'client CPU ms/reward': round(row.client_cpu_ms_per_reward, 3), failed: round(row.failed), load: String(row.load) }))), '');
  }
  const startup = results.startup;
  if (Array.isArray(startup)) {
    lines.push(formatTable(startup.map((row: Row) => ({ scenario: String(row.scenario), 'CPU ms (median)': round(row.cpu_ms, 0), 'CPU ms (min)': round(row.cpu_ms_min, 0), 'wall ms': round(row.wall_ms, 0), 'peak RSS MB': round(row.peak_rss_mb, 0), load: String(row.load) }))), '');
  }
  const groups = results.groups;
  if (Array.isArray(groups)) {
    lines.push(
      formatTable(
        groups.map((row: Row) => ({
          mode: String(row.scenario),
          'calls/group': round(row.calls_per_group, 2),
          'input tok/group': round(row.input_tokens_per_group, 0),
          'cached input': typeof row.cached_input_share === 'number' ? `${(row.cached_input_share * 100).toFixed(1)}%` : '–',
          'output tok/group': round(row.output_tokens_per_group, 0),
          'group wall s (mean)': round(row.group_wall_s_mean, 2),
          'step wall s': round(row.step_wall_s, 2),
          'ok/error': `${String(row.items_ok)}/${String(row.items_error)}`,
        })),
      ),
      '',
    );
  }
  const drivers = results['sqlite-drivers'];
  if (Array.isArray(drivers)) {
    const perReply = (timing: unknown) => (timing ? `${(timing as { wallUs: number }).wallUs} / ${(timing as { cpuUs: number }).cpuUs}` : '–');
    lines.push(formatTable(drivers.map((row: Row) => ({ 'SQLite driver': String(row.driver), node: String(row.node), replies: round(row.replies), 'write µs (wall / CPU)': perReply(row.writeUs), 'store read µs': perReply(row.readUs), 'SELECT µs': perReply(row.selectUs), aborted: row.aborted ? String(row.aborted) : '' }))), '');
  }
  const otel = results['otel-import'];
  if (Array.isArray(otel)) {
    lines.push(formatTable(otel.map((row: Row) => ({ scenario: String(row.scenario), 'file MB': round(row.file_mb, 0), items: round(row.items), messages: round(row.messages), 'wall s': round(row.wall_s, 2), 'peak RSS MB': round(row.peak_rss_mb, 0) }))), '');
  }
  for (const name of ['checks', 'llamacpp', 'server', 'serve-vs-hono', 'replicas', 'trainers', 'report', 'anthropic-caching', 'anthropic-transport']) {
    if (results[name] === undefined) continue;
    lines.push(`${name}: ${JSON.stringify(results[name], null, 1).replace(/\n\s*/g, ' ')}`, '');
  }
  const localJudge = results['local-judge'];
  if (Array.isArray(localJudge)) for (const row of localJudge as Row[]) lines.push(`${String(row.scenario)} (${String(row.items)})`, String(row.table), '');
  lines.push(`total ${((Date.now() - started) / 1000).toFixed(0)} s`);
  const text = lines.join('\n');
  process.stdout.write(`${text}\n`);

  const outDirectory = resolve(process.cwd(), 'bench/out');
  mkdirSync(outDirectory, { recursive: true });
  writeFileSync(join(outDirectory, 'latest.json'), `${JSON.stringify({ date: new Date().toISOString(), machine, results }, null, 2)}\n`);
  writeFileSync(join(outDirectory, 'latest.md'), `${printable.length > 0 ? formatMarkdownTable(printable) : ''}\n\n${ratios.length > 0 ? formatMarkdownTable(ratios) : ''}\n`);
}

await main();
