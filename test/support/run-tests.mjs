#!/usr/bin/env node
// `npm test`: the type check, ESLint, knip, vitest and the Python client tests. vitest is the
// long step and spends much of its time waiting on child processes and loopback servers, so the
// other steps run beside it instead of before and after it: on two cores that is minutes saved.
// vitest prints a dot per test as it runs (and, for a failing test, its output); another step's
// output is printed only when it fails, once vitest has finished; then one line per step. The
// command fails when any step fails. Arguments go to vitest (`npm test -- --reporter=default`).
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { delimiter } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = new URL('../../', import.meta.url);
const { scripts } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
// The project's own tools first, as npm puts them (so the runner also works outside npm).
const env = { ...process.env, PATH: `${fileURLToPath(new URL('node_modules/.bin', root))}${delimiter}${process.env.PATH}` };

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

/** Runs one step; a live step writes to this terminal, another is kept until printed. */
function run(step) {
  const started = Date.now();
  const output = [];
  const child = spawn(step.command, { shell: true, cwd: root, env, stdio: step.live ? 'inherit' : ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  if (!step.live) for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk) => output.push(chunk));
  return new Promise((resolve) => {
    child.on('error', (error) => output.push(Buffer.from(`${error.message}\n`)));
    child.on('close', (code, signal) => {
      children.delete(child);
      resolve({ step, code: code ?? (signal ? 1 : 0), signal, seconds: (Date.now() - started) / 1000, output: Buffer.concat(output).toString('utf8') });
    });
  });
}

async function runLane(steps) {
  const outcomes = [];
  for (const step of steps) outcomes.push(await run(step));
  return outcomes;
}

// An interrupt reaches every step, as it did when they ran in the foreground one by one.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
    process.exitCode = signal === 'SIGINT' ? 130 : 143;
  });
}

const lanesDone = lanes.map(runLane);
const outcomes = (await Promise.all(lanesDone)).flat();

const status = (outcome) => (outcome.code === 0 ? 'ok' : outcome.signal ? `stopped by ${outcome.signal}` : `FAILED (exit ${outcome.code})`);
for (const outcome of outcomes.filter((entry) => !entry.step.live && entry.code !== 0)) {
  process.stdout.write(`\n── ${outcome.step.name}: ${outcome.step.command} — ${status(outcome)}, ${outcome.seconds.toFixed(1)} s\n${outcome.output}`);
}
process.stdout.write('\n');
for (const outcome of outcomes) process.stdout.write(`${outcome.code === 0 ? '✓' : '✗'} ${outcome.step.name.padEnd(12)} ${status(outcome).padEnd(18)} ${outcome.seconds.toFixed(1).padStart(6)} s\n`);
const failed = outcomes.filter((outcome) => outcome.code !== 0);
if (failed.length > 0) {
  process.stdout.write(`npm test: ${failed.map((outcome) => outcome.step.name).join(', ')} failed\n`);
  process.exitCode ||= 1;
}
