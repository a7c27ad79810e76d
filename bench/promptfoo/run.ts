/**
 * Runs promptfoo's llm-rubric grading over benchmark items against the judge simulator and
 * measures it: `promptfoo eval -c CONFIG --no-cache --grader openai:chat:MODEL -j N`, offline,
 * with `OPENAI_BASE_URL` at the simulator.
 *
 * CPU is measured with bash's `times` builtin: promptfoo runs as a child of a bash shell that
 * afterwards prints the user and system time of all its waited-for descendants, so the whole
 * promptfoo process tree is counted (to 1 ms). Wall time is taken around that shell and
 * excludes installation.
 *
 * Fairness notes: `--no-table --no-progress-bar` spare promptfoo terminal rendering that a
 * benchmark does not need; results are still written to promptfoo's database (its normal
 * behaviour), in a config folder kept beside the install and initialised before timing.
 * promptfoo runs up to 3 assertions of a test at once by default
 * (PROMPTFOO_ASSERTIONS_MAX_CONCURRENCY), so `-j N` allows up to 3N judge calls in flight;
 * pass `assertionConcurrency: 1` to cap judge calls at N.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RubricateError } from '../../src/errors.js';
import { parseBashTimes } from '../support/measure.js';
import { fetchSimulatorStats } from '../support/simulator-process.js';
import type { SimulatorStats } from '../simulator/types.js';
import { promptfooConfigYaml, readPromptfooOutput, type PromptfooItem, type PromptfooMismatch } from './config.js';
import { ensurePromptfoo, promptfooVersion } from './install.js';

export interface RunPromptfooOptions {
  items: readonly PromptfooItem[];
  /** Base URL of the judge simulator (or any OpenAI-compatible server), ending in `/v1`. */
  simulatorUrl: string;
  /** promptfoo's `-j`: tests evaluated at once. */
  concurrency: number;
  /** Where the config, output and logs go; a fresh temporary folder (removed afterwards) when absent. */
  workDirectory?: string;
  /** Where promptfoo is (or gets) installed; default in the OS temp folder. */
  installDirectory?: string;
  /** Grader model name (`--grader openai:chat:MODEL`). Default gpt-4.1-mini. */
  graderModel?: string;
  /** PROMPTFOO_ASSERTIONS_MAX_CONCURRENCY (promptfoo's default is 3). */
  assertionConcurrency?: number;
  /** Also time `promptfoo --version` and an eval with no grading, reported as `startup`. Default true. */
  measureStartup?: boolean;
  /** Kill promptfoo after this long. Default 30 minutes. */
  timeoutMs?: number;
  log?: (line: string) => void;
}

export interface ProcessCost {
  wallMs: number;
  /** user + system of the whole process tree. */
  cpuMs: number;
}

export interface PromptfooStartup {
  /** `promptfoo --version`. */
  version: ProcessCost;
  /** `promptfoo eval` of one test with the echo provider and no assertions: the fixed cost of an eval run. */
  emptyEval: ProcessCost;
}

export interface PromptfooRunResult {
  wallMs: number;
  cpuMs: number;
  /** Judge calls promptfoo made (from the simulator's stats when reachable, else promptfoo's own count). */
  calls: number;
  inputTokens?: number;
  cachedInputTokens?: number;
  outputTokens?: number;
  /** Per item id, per criterion: promptfoo's llm-rubric pass, or null when it has none. */
  verdicts: Map<string, Array<boolean | null>>;
  /** Verdicts that differ from `simulatedVerdict`. */
  mismatches: PromptfooMismatch[];
  /** Tests that failed outside grading (provider errors). */
  errors: number;
  exitCode: number | null;
  startup?: PromptfooStartup;
  promptfooVersion: string;
  /** Set when promptfoo could not be installed or run; all figures are then zero. */
  skipped?: string;
}

/** Environment of the promptfoo process: offline, no telemetry or update checks, dummy key. */
export function promptfooEnvironment(simulatorUrl: string, configDirectory: string, assertionConcurrency?: number): NodeJS.ProcessEnv {
  // A minimal environment, so no real provider keys or loader flags of ours leak in.
  const environment: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? os.homedir(),
    LANG: process.env.LANG ?? 'C.UTF-8',
    TMPDIR: os.tmpdir(),
    OPENAI_BASE_URL: simulatorUrl,
    OPENAI_API_KEY: 'sk-simulated-judge',
    PROMPTFOO_CONFIG_DIR: configDirectory,
    PROMPTFOO_DISABLE_TELEMETRY: '1',
    PROMPTFOO_DISABLE_UPDATE: '1',
    PROMPTFOO_DISABLE_SHARING: '1',
    PROMPTFOO_DISABLE_REMOTE_GENERATION: '1',
    PROMPTFOO_DISABLE_REDTEAM_REMOTE_GENERATION: '1',
    PROMPTFOO_DISABLE_SHARE_EMAIL_REQUEST: '1',
    // promptfoo 0.121 warns that Node 20 is past its support window; the warning changes nothing.
    PROMPTFOO_DISABLE_RUNTIME_WARNINGS: '1',
    NO_COLOR: '1',
  };
  if (assertionConcurrency !== undefined) environment.PROMPTFOO_ASSERTIONS_MAX_CONCURRENCY = String(assertionConcurrency);
  return environment;
}

interface TimedProcess extends ProcessCost {
  exitCode: number | null;
  log: string;
}

/**
 * Runs `node ENTRY ...args` under bash and returns wall time, the process tree's CPU (from
 * `times`) and the combined output (last 20 kB). The shell is its own process group so a
 * timeout can end exactly the processes started here.
 */
async function runUnderBash(entry: string, args: readonly string[], environment: NodeJS.ProcessEnv, workDirectory: string, timeoutMs: number): Promise<TimedProcess> {
  const logFile = path.join(workDirectory, `promptfoo-${process.pid}-${Date.now()}.log`);
  const timesFile = `${logFile}.times`;
  const script = '"$@" >"$RUBRICATE_LOG" 2>&1; status=$?; times >"$RUBRICATE_TIMES"; exit $status';
  const started = performance.now();
  const child = spawn('bash', ['-c', script, 'bash', process.execPath, entry, ...args], {
    cwd: workDirectory,
    env: { ...environment, RUBRICATE_LOG: logFile, RUBRICATE_TIMES: timesFile },
    stdio: 'ignore',
    detached: true,
  });
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => {
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
  const wallMs = performance.now() - started;
  const log = existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(-20_000) : '';
  const times = existsSync(timesFile) ? parseBashTimes(readFileSync(timesFile, 'utf8')) : undefined;
  rmSync(logFile, { force: true });
  rmSync(timesFile, { force: true });
  const cpuMs = times ? times.childrenUserMs + times.childrenSystemMs + times.shellUserMs + times.shellSystemMs : Number.NaN;
  return { wallMs, cpuMs, exitCode, log };
}

function skippedResult(reason: string): PromptfooRunResult {
  return { wallMs: 0, cpuMs: 0, calls: 0, verdicts: new Map(), mismatches: [], errors: 0, exitCode: null, promptfooVersion, skipped: reason };
}

function evalArguments(configFile: string, outputFile: string, graderModel: string, concurrency: number): string[] {
  return ['eval', '-c', configFile, '--no-cache', '--grader', `openai:chat:${graderModel}`, '-j', String(concurrency), '-o', outputFile, '--no-table', '--no-progress-bar'];
}

/** Times promptfoo's fixed costs: `--version`, and an eval with one echo test and no grading. */
export async function measurePromptfooStartup(entry: string, environment: NodeJS.ProcessEnv, workDirectory: string, timeoutMs = 120_000): Promise<PromptfooStartup> {
  const version = await runUnderBash(entry, ['--version'], environment, workDirectory, timeoutMs);
  const configFile = path.join(workDirectory, 'startup-config.yaml');
  writeFileSync(configFile, promptfooConfigYaml([{ id: 'startup', response: 'hello', criteria: [] }]));
  const outputFile = path.join(workDirectory, 'startup-output.json');
  const emptyEval = await runUnderBash(entry, evalArguments(configFile, outputFile, 'gpt-4.1-mini', 1), environment, workDirectory, timeoutMs);
  if (emptyEval.exitCode !== 0 && emptyEval.exitCode !== 100) {
    throw new RubricateError('INTERNAL', `promptfoo startup eval failed (exit ${emptyEval.exitCode}): ${emptyEval.log.slice(-600)}`);
  }
  return { version: { wallMs: version.wallMs, cpuMs: version.cpuMs }, emptyEval: { wallMs: emptyEval.wallMs, cpuMs: emptyEval.cpuMs } };
}

async function simulatorSnapshot(url: string): Promise<SimulatorStats | undefined> {
  try {
    return await fetchSimulatorStats(url);
  } catch {
    return undefined;
  }
}

export async function runPromptfoo(options: RunPromptfooOptions): Promise<PromptfooRunResult> {
  if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
    throw new RubricateError('CONFIG_INVALID', 'concurrency must be an integer >= 1', { field: 'concurrency' });
  }
  const ids = new Set<string>();
  for (const item of options.items) {
    if (ids.has(item.id)) throw new RubricateError('INPUT_INVALID', `duplicate item id ${item.id}: ids key the results`, { field: 'items.id' });
    ids.add(item.id);
  }
  const install = await ensurePromptfoo({ installDirectory: options.installDirectory, log: options.log });
  if (!install.ok) return skippedResult(install.reason);

  const ownWorkDirectory = options.workDirectory === undefined;
  const workDirectory = options.workDirectory ?? mkdtempSync(path.join(os.tmpdir(), 'rubricate-promptfoo-run-'));
  mkdirSync(workDirectory, { recursive: true });
  // promptfoo's database and settings persist beside the install, like a user's ~/.promptfoo.
  const configDirectory = path.join(install.installDirectory, 'promptfoo-home');
  mkdirSync(configDirectory, { recursive: true });
  const environment = promptfooEnvironment(options.simulatorUrl, configDirectory, options.assertionConcurrency);
  const timeoutMs = options.timeoutMs ?? 30 * 60_000;

  try {
    // The first eval creates and migrates the database; do that before anything is timed.
    let startup: PromptfooStartup | undefined;
    try {
      if (!existsSync(path.join(configDirectory, 'promptfoo.db'))) await measurePromptfooStartup(install.entry, environment, workDirectory);
      if (options.measureStartup !== false) startup = await measurePromptfooStartup(install.entry, environment, workDirectory);
    } catch (error) {
      return skippedResult(`promptfoo does not run here: ${error instanceof Error ? error.message : String(error)}`);
    }

    const configFile = path.join(workDirectory, 'promptfooconfig.yaml');
    const outputFile = path.join(workDirectory, 'promptfoo-output.json');
    writeFileSync(configFile, promptfooConfigYaml(options.items));
    rmSync(outputFile, { force: true });
    const before = await simulatorSnapshot(options.simulatorUrl);
    options.log?.(`promptfoo eval: ${options.items.length} tests, -j ${options.concurrency}`);
    const run = await runUnderBash(install.entry, evalArguments(configFile, outputFile, options.graderModel ?? 'gpt-4.1-mini', options.concurrency), environment, workDirectory, timeoutMs);
    const after = await simulatorSnapshot(options.simulatorUrl);
    // promptfoo exits 100 when some tests fail, which half of them do by design.
    if ((run.exitCode !== 0 && run.exitCode !== 100) || !existsSync(outputFile)) {
      return { ...skippedResult(`promptfoo eval failed (exit ${run.exitCode}): ${run.log.slice(-1000)}`), wallMs: run.wallMs, cpuMs: run.cpuMs, exitCode: run.exitCode };
    }
    const read = readPromptfooOutput(readFileSync(outputFile, 'utf8'), options.items);
    if ('error' in read) return { ...skippedResult(read.error), wallMs: run.wallMs, cpuMs: run.cpuMs, exitCode: run.exitCode };

    const simulatorCounts = before && after ? countPromptfooTraffic(before, after) : undefined;
    return {
      wallMs: run.wallMs,
      cpuMs: run.cpuMs,
      calls: simulatorCounts?.requests ?? read.reportedRequests,
      ...(simulatorCounts
        ? { inputTokens: simulatorCounts.inputTokens, cachedInputTokens: simulatorCounts.cachedInputTokens, outputTokens: simulatorCounts.outputTokens }
        : {}),
      verdicts: read.verdicts,
      mismatches: read.mismatches,
      errors: read.errors,
      exitCode: run.exitCode,
      startup,
      promptfooVersion,
    };
  } finally {
    if (ownWorkDirectory) rmSync(workDirectory, { recursive: true, force: true });
  }
}

/** promptfoo-dialect traffic between two stats snapshots (the simulator may have been reset in between only by us). */
function countPromptfooTraffic(before: SimulatorStats, after: SimulatorStats): { requests: number; inputTokens: number; cachedInputTokens: number; outputTokens: number } {
  const start = before.byDialect.promptfoo ?? { requests: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 };
  const end = after.byDialect.promptfoo ?? { requests: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 };
  return {
    requests: end.requests - start.requests,
    inputTokens: end.inputTokens - start.inputTokens,
    cachedInputTokens: end.cachedInputTokens - start.cachedInputTokens,
    outputTokens: end.outputTokens - start.outputTokens,
  };
}
