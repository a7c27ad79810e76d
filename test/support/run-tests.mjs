#!/usr/bin/env node
// `npm test`: the type check, ESLint, knip, vitest and the Python client tests. vitest is the
// long step and spends much of its time waiting on child processes and loopback servers, so the
// other steps run beside it instead of before and after it: on two cores that is minutes saved.
// vitest prints a dot per test as it runs (and, for a failing test, its output); another step's
// output is printed only when it fails, once vitest has finished; each step says when it starts
// and, with its time, when it ends (a quiet step still shows it is alive); then one line per
// step. The command fails when any step fails. Arguments go to vitest (`npm test -- --reporter=default`).
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { delimiter } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = new URL('../../', import.meta.url);
const { scripts, optionalDependencies } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));

// The light install (`npm ci --omit=optional`) leaves out the native packages vitest and the type
// check load (rolldown's binding among them); vitest would then fail with advice to delete
// package-lock.json, which is wrong here. Our own optional packages tell the two installs apart:
// `openai` is plain JavaScript, so a full install always has it.
if (optionalDependencies?.openai && !existsSync(new URL('node_modules/openai/package.json', root))) {
  process.stderr.write(
    'npm test: this checkout has the light install (npm ci --omit=optional), which leaves out the optional packages the tests need ' +
      '(the native builds vitest and the type check load, the openai SDK, the local judge). Run `npm ci` for the full install, then `npm test`.\n',
  );
  process.exit(2);
}

/**
 * Timeouts in the tests are hang guards, never assertions: on a loaded machine they grow. The factor
 * is read once here, from the load when the suite starts (or RUBRICATE_TEST_TIME_SCALE), and every
 * step reads the same (src/testing/hang-guard.ts, clients/python/tests/support.py).
 */
const loadAtStart = loadavg().slice(0, 2);
const timeScale = process.env.RUBRICATE_TEST_TIME_SCALE ?? String(Math.min(10, Math.max(1, 1 + Math.max(...loadAtStart) / availableParallelism())).toFixed(1));
// The project's own tools first, as npm puts them (so the runner also works outside npm).
const env = { ...process.env, RUBRICATE_TEST_TIME_SCALE: timeScale, PATH: `${fileURLToPath(new URL('node_modules/.bin', root))}${delimiter}${process.env.PATH}` };

/**
 * The steps beside vitest run at a lower CPU priority: they then fill the time vitest's workers
 * spend waiting (on child processes, loopback servers, timers) instead of taking cores from it.
 * The whole script runs under nice, each command of a chain (`a && b`) included.
 */
const besideVitest = (command) => (process.platform === 'win32' ? command : `nice -n 10 sh -c '${command.replaceAll("'", "'\\''")}'`);

/** Steps in one lane run one after another; lanes run side by side. */
/** vitest's short form: dots, failures in full, the totals; the console output of passing tests is left out. */
const vitestArguments = process.argv.slice(2);
const vitest = ['vitest run', ...(vitestArguments.some((argument) => argument.startsWith('--reporter')) ? [] : ['--reporter=dot', '--silent=passed-only']), ...vitestArguments].join(' ');

const lanes = [
  [{ name: 'vitest', command: vitest, live: true }],
  ['typecheck', 'lint', 'knip'].map((name) => ({ name, command: besideVitest(scripts[name]) })),
  [{ name: 'test:python', command: besideVitest(scripts['test:python']) }],
];

const children = new Set();
const groups = process.platform !== 'win32';
/** Signals a step's whole process group (its shell and everything under it). */
function signalStep(child, signal) {
  try {
    if (groups && child.pid !== undefined) process.kill(-child.pid, signal);
    else child.kill(signal);
  } catch {
    // already gone
  }
}

const status = (outcome) => (outcome.code === 0 ? 'ok' : outcome.signal ? `stopped by ${outcome.signal}` : `FAILED (exit ${outcome.code})`);
const runStarted = Date.now();
const clock = () => `${((Date.now() - runStarted) / 1000).toFixed(0).padStart(4)} s`;
/** A progress line; vitest's dots may be mid-row, so it starts a line of its own. */
const progress = (text) => process.stdout.write(`\n[npm test ${clock()}] ${text}\n`);

/** Runs one step; a live step writes to this terminal, another is kept until printed. */
function run(step) {
  const started = Date.now();
  progress(`${step.name}: started${step.live ? '' : ' (its output is shown if it fails)'}`);
  const output = [];
  // Each step in a process group of its own, so that an interrupt reaches the step's processes and
  // not only the shell that started them (vitest under `sh -c` kept running after its shell was told).
  const child = spawn(step.command, { shell: true, cwd: root, env, detached: groups, stdio: step.live ? ['ignore', 'inherit', 'inherit'] : ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  if (!step.live) for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk) => output.push(chunk));
  return new Promise((resolve) => {
    child.on('error', (error) => output.push(Buffer.from(`${error.message}\n`)));
    child.on('close', (code, signal) => {
      children.delete(child);
      const outcome = { step, code: code ?? (signal ? 1 : 0), signal, seconds: (Date.now() - started) / 1000, output: Buffer.concat(output).toString('utf8') };
      progress(`${step.name}: ${status(outcome)} in ${outcome.seconds.toFixed(1)} s`);
      resolve(outcome);
    });
  });
}

let interrupted = false;

async function runLane(steps) {
  const outcomes = [];
  // After an interrupt, the steps not yet started stay unstarted.
  for (const step of steps) if (!interrupted) outcomes.push(await run(step));
  return outcomes;
}

// An interrupt reaches every step, as it did when they ran in the foreground one by one.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    interrupted = true;
    for (const child of children) signalStep(child, signal);
    process.exitCode = signal === 'SIGINT' ? 130 : 143;
  });
}

progress(`timeouts are hang guards, scaled ×${timeScale} for this machine's load (RUBRICATE_TEST_TIME_SCALE)`);
const lanesDone = lanes.map(runLane);
const outcomes = (await Promise.all(lanesDone)).flat();

for (const outcome of outcomes.filter((entry) => !entry.step.live && entry.code !== 0)) {
  process.stdout.write(`\n── ${outcome.step.name}: ${outcome.step.command} — ${status(outcome)}, ${outcome.seconds.toFixed(1)} s\n${outcome.output}`);
}
process.stdout.write('\n');
for (const outcome of outcomes) process.stdout.write(`${outcome.code === 0 ? '✓' : '✗'} ${outcome.step.name.padEnd(12)} ${status(outcome).padEnd(18)} ${outcome.seconds.toFixed(1).padStart(6)} s\n`);
// The load says how to read the times above, and whether a timeout may be the machine's, not the code's.
const loadText = (values) => values.map((value) => value.toFixed(1)).join(' / ');
process.stdout.write(`load average (1 / 5 min) at the start ${loadText(loadAtStart)}, at the end ${loadText(loadavg().slice(0, 2))}, on ${availableParallelism()} cores; hang guards ×${timeScale}\n`);
const failed = outcomes.filter((outcome) => outcome.code !== 0);
if (failed.length > 0) {
  process.stdout.write(`npm test: ${failed.map((outcome) => outcome.step.name).join(', ')} failed\n`);
  process.exitCode ||= 1;
}
