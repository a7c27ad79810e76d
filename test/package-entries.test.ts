/**
 * The package's public surface: the root entry loads nothing heavy (no SQLite, no optional
 * SDK, no Redis), and every subpath entry gives the functions the docs present.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from './helpers.js';

const run = promisify(execFile);
const directory = mkdtempSync(join(tmpdir(), 'rubricate-entries-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** Imports a source entry in a fresh Node process; returns every module URL it resolved. */
async function modulesLoadedBy(entry: string): Promise<string[]> {
  const log = join(directory, `${entry.replace(/\W/g, '_')}.log`);
  const script = `await import(${JSON.stringify(pathToFileURL(join(projectRoot, entry)).href)});`;
  await run(process.execPath, ['--import', 'tsx', '--import', pathToFileURL(join(projectRoot, 'test/support/record-imports.mjs')).href, '--input-type=module', '-e', script], {
    cwd: projectRoot,
    env: { ...process.env, RUBRICATE_RECORD_IMPORTS: log },
  });
  return readFileSync(log, 'utf8').split('\n').filter(Boolean);
}

const heavy = ['better-sqlite3', 'openai', 'node-llama-cpp', 'ioredis', 'bullmq', 'playwright-core'];

describe('package entries', () => {
  it('importing the root loads neither SQLite nor any optional SDK', async () => {
    const loaded = await modulesLoadedBy('src/index.ts');
    // The hook saw the entry itself, so an empty list cannot pass for a clean one.
    expect(loaded.some((url) => url.endsWith('/src/index.ts'))).toBe(true);
    expect(loaded.some((url) => url.includes('/src/pipeline/grader.ts'))).toBe(true);
    for (const name of heavy) expect(loaded.filter((url) => url.includes(`/node_modules/${name}/`))).toEqual([]);
  });

  it('the store entry is where the SQLite driver loads; the driver itself (node:sqlite or better-sqlite3) only at the first opening', async () => {
    const loaded = await modulesLoadedBy('src/entries/store.ts');
    expect(loaded.some((url) => url.endsWith('/src/store/sqlite-driver.ts'))).toBe(true);
    const rootLoaded = await modulesLoadedBy('src/index.ts');
    expect(rootLoaded.some((url) => url.endsWith('/src/store/sqlite-driver.ts'))).toBe(false);
  });

  it('each subpath gives the capabilities the docs present', async () => {
    const root = await import('../src/index.js');
    for (const name of ['grade', 'gradeFile', 'scoreFile', 'Grader', 'Comparer', 'createJudge', 'normalizeItem', 'getScoring', 'runCheck']) expect(typeof root[name as keyof typeof root], name).toBe('function');
    const server = await import('../src/entries/server.js');
    expect(typeof server.createServer).toBe('function');
    expect(typeof server.startServer).toBe('function');
    const report = await import('../src/entries/report.js');
    expect(typeof report.writeReport).toBe('function');
    const generation = await import('../src/entries/generation.js');
    expect(typeof generation.createRubricGenerator).toBe('function');
    expect(typeof generation.refineRubric).toBe('function');
    const meta = await import('../src/entries/meta.js');
    expect(typeof meta.computeBinaryMeta).toBe('function');
    expect(typeof meta.probe).toBe('function');
    expect(typeof meta.humanBaseline).toBe('function');
    expect(typeof meta.llmJudgeMeta).toBe('function');
    const testing = await import('../src/entries/testing.js');
    expect(typeof testing.startFakeJudge).toBe('function');
    expect(typeof testing.writeTinyGguf).toBe('function');
  });
});
