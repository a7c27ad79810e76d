/**
 * Every `rubricate` command in the README and in docs/ runs as written, on the files in examples/.
 * Offline as typed: only a command that names a provider's judge (`--judge openai:…`, which says it
 * needs a key or an endpoint) or reuses the judge of the results it reads (`align`, `rejudge`) gets
 * an endpoint: the scripted judge that `rubricate fake-judge` serves (started here in this process,
 * as a user starts it: OPENAI_BASE_URL points at it). Any other command that needs a judge and names
 * none stops with exit 2, and fails here. The commands of a page run in order, in a
 * folder of their own where `examples/` is the checkout's, so a command may read what an earlier
 * one wrote, and the default outputs of two commands collide as they would for a user. Each must
 * exit 0, or the code its `# exit N` comment names, and every output it names must exist.
 *
 * A command that needs what no test can give it as written (a server it would start and keep, a
 * Redis or a GPU host it names, a provider's own API and key, minutes of Batch API polling) is
 * checked instead: every flag known to its command and every value accepted. Docs that drift
 * from the code fail here either way.
 */
import { existsSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { commandLineProblem } from '../src/cli/in-process.js';
import { startTestServer } from '../src/server/test-support.js';
import { binaryVerdict } from '../src/testing/fake-judge.js';
import { runCli } from '../src/cli/main.js';
import { fileForModel } from '../src/cli/eval-models.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { projectRoot, runCliInProcess } from './helpers.js';
import { hangGuard } from '../src/testing/hang-guard.js';

interface DocCommand {
  /** `file: line`, for the test's name. */
  source: string;
  args: string[];
  exit: number;
  /** Written the way a user types it after `npm ci`: the checkout's rubricate through npx. */
  npx: boolean;
  /** Why it is only checked (undefined: it runs). */
  checkOnly?: string;
}

/** Shell-like words of one command line (plain and single- or double-quoted words; no expansions). */
function words(line: string): string[] {
  const found: string[] = [];
  for (const match of line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) found.push(match[1] ?? match[2] ?? match[3]);
  return found;
}

/** Why a command cannot run here as written, or undefined. */
function whyCheckOnly(args: readonly string[], environment: string): string | undefined {
  if (['serve', 'worker', 'fake-judge', 'bench-local', 'view'].includes(args[0])) return `${args[0]} keeps running or needs a model file`;
  if (args.some((argument) => /^rediss?:\/\//.test(argument))) return 'it names a Redis';
  if (args.some((argument) => /^https?:\/\//.test(argument) && !/^https?:\/\/(127\.0\.0\.1|localhost)[:/]/.test(argument))) return 'it names a host';
  if (args.some((argument, index) => ['--judge', '--generator', '--model'].includes(args[index - 1] ?? '') && /^(azure|anthropic|gemini|gguf):/.test(argument))) return "it calls a provider's own API or a local model";
  if (args.includes('--model-base-url') && !args.includes('--dry-run')) return 'it names a model server of its own';
  if (args.includes('--batch') && !args.includes('--dry-run')) return 'Batch API polling takes minutes';
  if (args[0] === 'batches' && (args.includes('--refresh') || args.includes('--cancel'))) return "it asks the provider's Batch API";
  if (environment.includes('…') || args.some((argument) => argument.includes('…'))) return 'it has a placeholder to fill in';
  if (args.some((argument) => argument.startsWith('../shared/data/')) || args.includes('--benchmark') || args[0] === 'benchmarks') return 'it reads the benchmark data (npm run data:fetch)';
  if (args.some((argument) => argument.includes('$'))) return 'it takes shell variables';
  return undefined;
}

/** Whether a command names a judge or generator that needs an endpoint and a key, or reuses the one its results were graded with. */
function needsEndpoint(args: readonly string[]): boolean {
  const names = args.some((argument, index) => ['--judge', '--generator', '--cascade-judge'].includes(args[index - 1] ?? '') && /^(openai|azure|anthropic|gemini):/.test(argument));
  return names || (['align', 'rejudge'].includes(args[0]) && !args.includes('--judge'));
}

/** The shell lines of a Markdown file's code blocks (bash, sh and unlabelled), continuations joined. */
function codeLines(text: string): string[] {
  const lines: string[] = [];
  let fence: string | undefined;
  let pending = '';
  for (const raw of text.split('\n')) {
    const opening = /^```(\S*)\s*$/.exec(raw);
    if (opening) {
      fence = fence === undefined ? opening[1] : undefined;
      continue;
    }
    if (fence === undefined || !['', 'bash', 'sh', 'shell'].includes(fence)) continue;
    const line = raw.replace(/^\$ /, '');
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1).trim()} `;
      continue;
    }
    lines.push(`${pending}${line}`.trim());
    pending = '';
  }
  return lines;
}

/** `rubricate …` commands of a Markdown file, in order (after `npm ci &&` and environment assignments). */
function commandsIn(file: string): DocCommand[] {
  const commands: DocCommand[] = [];
  for (const line of codeLines(readFileSync(join(projectRoot, file), 'utf8'))) {
    const match = /^(?:npm ci(?: --omit=optional)? && )?((?:[A-Z_]+=\S+ )*)(npx )?rubricate (.*?)(?:\s+#\s*exit (\d+))?(?:\s+#.*)?$/.exec(line);
    if (!match) continue;
    const args = words(match[3].replace(/\s*&$/, ''));
    commands.push({ source: `${file}: ${line}`, args, exit: match[4] ? Number(match[4]) : 0, npx: match[2] !== undefined, checkOnly: whyCheckOnly(args, match[1]) });
  }
  return commands;
}

const pages = ['README.md', ...readdirSync(join(projectRoot, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
const documented = new Map(pages.map((page) => [page, commandsIn(page)] as const));
const outputFlags = new Set(['--out', '--metrics', '--report', '--summary', '--write-replay', '--write-items']);

let judgeUrl: string;
let stopJudge: (() => Promise<number>) | undefined;

beforeAll(async () => {
  // `rubricate fake-judge`, as the README starts it, in this process.
  const controller = new AbortController();
  let listening: (url: string) => void = () => undefined;
  const started = new Promise<string>((resolve) => (listening = resolve));
  const exited = runCli(['fake-judge', '--port', '0', '--verdicts', 'met'], {
    stdout: (text) => {
      const line = JSON.parse(text) as { event: string; url: string };
      if (line.event === 'listening') listening(line.url);
    },
    stderr: () => undefined,
    signal: controller.signal,
  });
  judgeUrl = await started;
  stopJudge = () => (controller.abort(), exited);
});

afterAll(async () => {
  expect(await stopJudge?.()).toBe(0);
});

describe('documented commands run as written', { timeout: hangGuard(120_000) }, () => {
  test('the docs hold a command for every input format and most commands', () => {
    const all = [...documented.values()].flat();
    expect(all.length).toBeGreaterThan(60);
    const formats = new Set(all.map((command) => command.args[command.args.indexOf('--format') + 1]));
    for (const name of ['items', 'healthbench', 'researchrubrics', 'prbench', 'profbench', 'advancedif', 'drb2', 'biggen', 'rar', 'rubrichub', 'ifeval', 'tau-bench', 'simple-evals', 'pairs', 'llmbar', 'pandalm', 'autoj', 'judgebench', 'multichallenge', 'rewardbench2', 'rm-bench']) {
      expect(formats, name).toContain(name);
    }
    const commands = new Set(all.map((command) => command.args[0]));
    for (const name of ['grade', 'compare', 'score', 'convert', 'report', 'meta', 'probe', 'generate', 'refine', 'serve', 'worker', 'merge', 'batches', 'fake-judge']) expect(commands, name).toContain(name);
  });

  test('a page whose commands name a provider\'s judge says which variables they need', () => {
    for (const [page, commands] of documented) {
      if (!commands.some((command) => !command.checkOnly && needsEndpoint(command.args) && !['align', 'rejudge'].includes(command.args[0]))) continue;
      expect(readFileSync(join(projectRoot, page), 'utf8'), `${page}: say that its openai: commands need OPENAI_API_KEY or OPENAI_BASE_URL`).toMatch(/OPENAI_API_KEY|OPENAI_BASE_URL/);
    }
  });

  test.for(pages.filter((page) => documented.get(page)!.length > 0))('%s', async (page, { tempDir }) => {
    // A folder of the page's own, where examples/ is the checkout's, as in the checkout itself.
    symlinkSync(join(projectRoot, 'examples'), join(tempDir, 'examples'));
    const saved = { cwd: process.cwd(), env: { ...process.env } };
    process.chdir(tempDir);
    Object.assign(process.env, { RUBRICATE_CACHE_DIR: join(tempDir, 'cache') });
    delete process.env.RUBRICATE_JUDGE;
    try {
      // Files that a command only checked would have written: a later command reading one is only checked too.
      const unwritten = new Set<string>();
      for (const command of documented.get(page)!) {
        expect(command.npx, `${command.source}: write it as a user types it after npm ci, npx rubricate …`).toBe(true);
        const readsUnwritten = command.args.some((argument) => unwritten.has(argument.replace(/^replay:/, '')));
        if (command.checkOnly || readsUnwritten) {
          expect(await commandLineProblem(command.args), command.source).toBeUndefined();
          command.args.forEach((argument, index) => {
            if (outputFlags.has(command.args[index - 1] ?? '')) unwritten.add(argument);
          });
          continue;
        }
        // Offline as typed: the endpoint is there only for a line that names a provider's judge
        // (it says it needs a key), or re-grades with the judge its results were graded with.
        if (needsEndpoint(command.args)) Object.assign(process.env, { OPENAI_BASE_URL: judgeUrl, OPENAI_API_KEY: 'docs-test-key' });
        else for (const name of ['OPENAI_BASE_URL', 'OPENAI_API_KEY']) delete process.env[name];
        const result = await runCliInProcess(command.args);
        expect(result.code, `${command.source}\n${result.stderr}`).toBe(command.exit);
        if (command.exit !== 0 || command.args.includes('--dry-run')) continue;
        // `eval` with several --model writes each model's outputs under a name of its own.
        const models = command.args[0] === 'eval' ? command.args.filter((_argument, index) => command.args[index - 1] === '--model') : [];
        for (const [index, flag] of command.args.entries()) {
          const output = command.args[index + 1];
          if (!outputFlags.has(flag) || output === '-') continue;
          for (const file of models.length > 1 ? models.map((model) => fileForModel(output, model)) : [output]) expect(existsSync(file), `${command.source}: ${flag} ${file}`).toBe(true);
        }
      }
    } finally {
      process.chdir(saved.cwd);
      for (const name of Object.keys(process.env)) if (!(name in saved.env)) delete process.env[name];
      Object.assign(process.env, saved.env);
    }
  });
});

describe('documented request bodies are answered as documented', () => {
  test('the Vertex reward request and answer of docs/rl-integration.md', async ({ closeAfter }) => {
    const text = readFileSync(join(projectRoot, 'docs/rl-integration.md'), 'utf8');
    const section = text.slice(text.indexOf('What Vertex posts to `/vertex/reward`'));
    const [request, answer] = [...section.matchAll(/```json\n([\s\S]*?)```/g)].slice(0, 2).map((match) => JSON.parse(match[1]) as Record<string, unknown>);
    const server = closeAfter(await startTestServer({ script: () => ({ content: binaryVerdict(true) }) }));
    const response = await server.post('/vertex/reward', request);
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(Object.keys(answer).sort());
    expect(body.reward).toBe(answer.reward);
    const aux = JSON.parse(String(body.user_requested_aux_info)) as { criteria: Array<{ met: boolean; points: number }> };
    const documented = JSON.parse(String(answer.user_requested_aux_info)) as typeof aux & Record<string, unknown>;
    expect(Object.keys(aux).sort()).toEqual(Object.keys(documented).sort());
    expect(aux.criteria.map(({ met, points }) => ({ met, points }))).toEqual(documented.criteria.map(({ met, points }) => ({ met, points })));
    // The system instruction and the reference reached the judge.
    expect(server.fake.requests[0].userText).toContain('system: Answer briefly.');
    expect(server.fake.requests[0].response).toBe('Apples and pears.');
  });
});
