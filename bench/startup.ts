/**
 * Start-up per command (issue #49): the CPU (user + system, less sensitive to a loaded machine
 * than wall time) of the built `rubricate` running `--version`, each main command's `--help`, and
 * a minimal real run of each: `grade` and `eval` of one item with the scripted judge (and the
 * scripted model), `report` of that results file, and `serve` and `view` up to the moment they
 * listen. Each is the median of STARTUP_ROUNDS (5) fresh processes; the load average is written
 * beside the figures.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { exitReportArgs, readExitReport } from './support/measure.js';
import { projectRoot } from './support/simulator-process.js';
import { syntheticItems } from './grading.js';

const rounds = Number(process.env.STARTUP_ROUNDS ?? 5);
const cli = join(projectRoot, 'bin', 'rubricate.js');
// The build, even when the sources changed since it was made (bin/rubricate.js would run them through tsx).
const environment = { ...process.env, NODE_OPTIONS: '', RUBRICATE_USE_BUILD: '1' };

interface Sample {
  cpuMs: number;
  wallMs: number;
  peakRssMb: number;
}

/** One command run to its end: its own CPU and peak RSS as it exited. */
async function runToEnd(directory: string, args: string[]): Promise<Sample> {
  const report = join(directory, 'exit-report.json');
  rmSync(report, { force: true });
  const started = performance.now();
  const child = spawn(process.execPath, [...exitReportArgs(report), cli, ...args], { cwd: directory, stdio: ['ignore', 'ignore', 'pipe'], env: environment });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-2000)));
  const [code] = (await once(child, 'exit')) as [number | null];
  const wallMs = performance.now() - started;
  if (code !== 0) throw new Error(`rubricate ${args.join(' ')} exited ${String(code)}: ${stderr}`);
  const measured = readExitReport(report);
  return { cpuMs: measured.cpuMs, wallMs, peakRssMb: measured.peakRssBytes / 1e6 };
}

/** `/proc/<pid>/stat` user + system and `/proc/<pid>/status` VmHWM of a live process. */
function liveFigures(pid: number): { cpuMs: number; peakRssMb: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const hwm = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return { cpuMs: (Number(fields[11]) + Number(fields[12])) * 10, peakRssMb: hwm ? (Number(hwm[1]) * 1024) / 1e6 : 0 };
}

/** A server command up to the moment it prints its address (`http://` on stdout or stderr), then stopped. */
async function runToListening(directory: string, args: string[]): Promise<Sample> {
  const started = performance.now();
  const child = spawn(process.execPath, [cli, ...args], { cwd: directory, stdio: ['ignore', 'pipe', 'pipe'], env: environment });
  try {
    const listening = new Promise<Sample>((resolve, reject) => {
      let seen = '';
      const look = (chunk: Buffer) => {
        seen = (seen + chunk.toString()).slice(-4000);
        if (!seen.includes('http://')) return;
        const wallMs = performance.now() - started;
        resolve({ ...liveFigures(child.pid as number), wallMs });
      };
      child.stdout.on('data', look);
      child.stderr.on('data', look);
      child.once('exit', (code) => reject(new Error(`rubricate ${args.join(' ')} exited ${String(code)} before it listened: ${seen}`)));
    });
    return await listening;
  } finally {
    child.kill('SIGTERM');
    if (child.exitCode === null) await once(child, 'exit');
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function load(): number {
  return Math.round(loadavg()[0] * 10) / 10;
}

/** The command lines measured, in a folder holding one item to grade, its results and a prompt for `eval`. */
function commandLines(directory: string): Array<{ name: string; args: string[]; server?: boolean }> {
  const one = join(directory, 'one.jsonl');
  writeFileSync(one, `${syntheticItems(1, 10, 1)[0]}\n`);
  const prompts = join(directory, 'prompts.jsonl');
  const item = JSON.parse(syntheticItems(1, 10, 1)[0]) as { id: string; prompt: string; rubric: unknown };
  writeFileSync(prompts, `${JSON.stringify({ id: item.id, prompt: item.prompt, rubric: item.rubric })}\n`);
  const common = ['--judge', 'scripted:mixed', '--cache', join(directory, 'cache.sqlite'), '--quiet', '--run-index', 'off', '--force'];
  return [
    { name: '--version', args: ['--version'] },
    ...['grade', 'eval', 'serve', 'report', 'view'].map((command) => ({ name: `${command} --help`, args: [command, '--help'] })),
    { name: 'grade, 1 item (scripted judge)', args: ['grade', '--input', one, '--out', join(directory, 'results.jsonl'), ...common] },
    { name: 'eval, 1 item (scripted model and judge)', args: ['eval', '--input', prompts, '--model', 'scripted', '--out', join(directory, 'eval.jsonl'), ...common] },
    { name: 'report of that results file', args: ['report', '--input', join(directory, 'results.jsonl'), '--out', join(directory, 'report.html')] },
    { name: 'serve, to listening', args: ['serve', '--port', '0', '--judge', 'scripted:mixed', '--cache', join(directory, 'serve-cache.sqlite'), '--log-level', 'warn'], server: true },
    { name: 'view, to listening', args: ['view', directory, '--port', '0', '--run-index', join(directory, 'runs.jsonl')], server: true },
  ];
}

/** Every command line, `rounds` fresh processes each, in turns (so load changes spread over all of them). */
export async function runStartup(): Promise<unknown[]> {
  const directory = mkdtempSync(join(tmpdir(), 'rubricate-bench-startup-'));
  try {
    const lines = commandLines(directory);
    const samples = lines.map(() => [] as Sample[]);
    const loadBefore = load();
    for (let round = 0; round < rounds; round += 1) {
      for (const [index, line] of lines.entries()) samples[index].push(line.server ? await runToListening(directory, line.args) : await runToEnd(directory, line.args));
    }
    const loadText = `${loadBefore}–${load()}`;
    return lines.map((line, index) => ({
      scenario: `start-up: ${line.name}`,
      cpu_ms: median(samples[index].map((sample) => sample.cpuMs)),
      cpu_ms_min: Math.min(...samples[index].map((sample) => sample.cpuMs)),
      wall_ms: median(samples[index].map((sample) => sample.wallMs)),
      peak_rss_mb: median(samples[index].map((sample) => sample.peakRssMb)),
      rounds,
      load: loadText,
    }));
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
