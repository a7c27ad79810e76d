/**
 * Vitest fixtures (`test.extend`) for the set-up most tests repeat: scripted loopback judges,
 * the real OpenAI-compatible client pointed at one, and temporary folders. Each fixture is
 * built only when a test asks for it, and torn down after that test whatever its outcome:
 * judges closed, servers stopped, folders removed.
 *
 *   import { test } from '../testing/vitest-fixtures.js';
 *   test('grades', async ({ fakeJudge, tempDir }) => { … });
 *   test('two endpoints', async ({ startJudge }) => { const a = await startJudge(script); … });
 *   test('retries', async ({ scriptedJudge }) => { const { fake, judge } = await scriptedJudge(script, { model: 'm' }); … });
 *   test('serves', async ({ startServe }) => { const serve = await startServe(['--judge', …]); … });
 *
 * `fileTempDir` is the one file-scoped fixture: a folder the tests of a file share (inputs
 * written once), removed after the file's last test; a file's own file-scoped fixtures build on it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test as base } from 'vitest';
import { createOpenAICompatibleJudge, type OpenAICompatibleJudgeOptions } from '../judges/openai/openai-judge.js';
import type { Judge } from '../judges/types.js';
import { startChild, type Child } from './child-process.js';
import { binaryVerdict, startFakeJudge, type FakeJudge, type FakeJudgeScript } from './fake-judge.js';
import { hangGuard } from './hang-guard.js';

/** The default script: every criterion met. */
const allMet: FakeJudgeScript = () => ({ content: binaryVerdict(true) });

/** Something a fixture starts and must stop after the test. */
type Closable = { close(): Promise<void> | void };

export interface RubricateFixtures {
  /** A fresh temporary folder, removed after the test. */
  tempDir: string;
  /** Makes more temporary folders (each removed after the test). */
  makeTempDir: (prefix?: string) => string;
  /** Starts a scripted loopback judge (closed after the test). */
  startJudge: (script?: FakeJudgeScript) => Promise<FakeJudge>;
  /** One scripted loopback judge, answering "met" until the test calls `setScript`. */
  fakeJudge: FakeJudge;
  /** The real OpenAI-compatible judge client pointed at a loopback judge (closed after the test). */
  connectJudge: (fake: FakeJudge, options?: Partial<OpenAICompatibleJudgeOptions>) => Judge & { close(): Promise<void> };
  /** Registers anything with `close()` (a server, a store) to be closed after the test, in reverse order. */
  closeAfter: <T extends Closable>(resource: T) => T;
  /** A scripted loopback judge and the real client pointed at it, in one step (both closed after the test). */
  scriptedJudge: (script?: FakeJudgeScript, options?: Partial<OpenAICompatibleJudgeOptions>) => Promise<ScriptedJudge>;
  /** Starts `rubricate serve --port 0 …args` as a process and waits for its `listening` line (killed after the test if still running). */
  startServe: (args: string[]) => Promise<ServeProcess>;
}

export interface ScriptedJudge {
  fake: FakeJudge;
  judge: Judge & { close(): Promise<void> };
}

/** A `rubricate serve` process started by the `startServe` fixture: its JSON lines (`listening` first) and its address. */
export interface ServeProcess extends Child {
  /** The address its `listening` line gave. */
  url: string;
}

export const test = base.extend<RubricateFixtures>({
  // Vitest reads a fixture's dependencies from its first parameter, which must be a destructuring pattern.
  // closeAfter depends on makeTempDir so that it is torn down first: what a test opened in a
  // temporary folder (a store, a server) is closed before the folder is removed.
  closeAfter: async ({ makeTempDir: _closedBeforeFoldersGo }, use) => {
    const resources: Closable[] = [];
    await use((resource) => {
      resources.push(resource);
      return resource;
    });
    for (const resource of resources.reverse()) await resource.close();
  },
  // eslint-disable-next-line no-empty-pattern
  makeTempDir: async ({}, use) => {
    const made: string[] = [];
    await use((prefix = 'rubricate-test-') => {
      const directory = mkdtempSync(join(tmpdir(), prefix));
      made.push(directory);
      return directory;
    });
    for (const directory of made) rmSync(directory, { recursive: true, force: true });
  },
  tempDir: async ({ makeTempDir }, use) => {
    await use(makeTempDir());
  },
  startJudge: async ({ closeAfter }, use) => {
    await use(async (script = allMet) => closeAfter(await startFakeJudge(script)));
  },
  fakeJudge: async ({ startJudge }, use) => {
    await use(await startJudge());
  },
  connectJudge: async ({ closeAfter }, use) => {
    // The id follows the model ("openai:fake-judge" by default), as it does for a real endpoint.
    await use((fake, options = {}) => closeAfter(createOpenAICompatibleJudge({ model: 'fake-judge', ...options, baseUrl: fake.baseUrl })));
  },
  scriptedJudge: async ({ startJudge, connectJudge }, use) => {
    await use(async (script, options) => {
      const fake = await startJudge(script);
      return { fake, judge: connectJudge(fake, options) };
    });
  },
  // eslint-disable-next-line no-empty-pattern
  startServe: async ({}, use) => {
    const started: Child[] = [];
    await use(async (args) => {
      const child = startChild(['bin/rubricate.js', 'serve', '--port', '0', ...args]);
      started.push(child);
      // Waits for the listening line; the bound only ends a hang (serve took 11 s to start at load 12).
      const listening = await child.nextLine((line) => line.event === 'listening', hangGuard(180_000));
      return Object.assign(child, { url: String(listening.url) });
    });
    for (const child of started) {
      if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGKILL');
      await child.exited;
    }
  },
}).extend(
  'fileTempDir',
  { scope: 'file' },
  // eslint-disable-next-line no-empty-pattern
  async ({}, { onCleanup }) => {
    const directory = mkdtempSync(join(tmpdir(), 'rubricate-test-'));
    onCleanup(() => rmSync(directory, { recursive: true, force: true }));
    return directory;
  },
);
