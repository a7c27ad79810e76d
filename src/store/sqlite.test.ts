import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, vi } from 'vitest';
import { test } from '../testing/vitest-fixtures.js';
import { describeReplyStoreContract } from './contract.js';
import { SqliteReplyStore } from './sqlite.js';
import { openSqlite } from './sqlite-driver.js';
import { hangGuard } from '../testing/hang-guard.js';

/** Debian's bubblewrap, which `.ci/run` installs. */
const bwrapPath = '/usr/bin/bwrap';

const reply = (text: string) => ({ text, usage: { inputTokens: 10, outputTokens: 2, cachedInputTokens: 0 } });
const storeModule = JSON.stringify(new URL('./sqlite.ts', import.meta.url).href);

function journals(path: string): string[] {
  return readdirSync(join(path, '..')).filter((name) => name.includes('.journal-'));
}

/**
 * Runs a module script in a child Node process. With `readOnlyFolder`, that folder is mounted
 * read-only for the child (bubblewrap), which holds for root too; switching to another user would
 * need that user to read the checkout and Node's binary, which CI machines do not promise.
 */
function runScript(script: string, options: { readOnlyFolder?: string } = {}) {
  const node = [process.execPath, '--import', 'tsx', '--input-type=module', '-e', script];
  if (options.readOnlyFolder === undefined) return spawnSync(node[0]!, node.slice(1), { encoding: 'utf8' });
  const folder = options.readOnlyFolder;
  return spawnSync(bwrapPath, ['--dev-bind', '/', '/', '--ro-bind', folder, folder, '--', ...node], { encoding: 'utf8' });
}

describeReplyStoreContract('SQLite', async (folder) => {
  const path = join(folder, 'cache.sqlite');
  // Create the file and its table first, so raw rows can be planted.
  new SqliteReplyStore(path).close();
  const raw = openSqlite(path);
  return {
    spec: path,
    writeRaw: async (key, text) => {
      raw.prepare('INSERT OR REPLACE INTO replies (key, reply, created_at) VALUES (?, ?, ?)').run(key, text, Date.now());
    },
    dispose: async () => {
      raw.close();
    },
  };
});

describe('SqliteReplyStore', () => {
  test('reads back what it stored, before and after the batch reaches SQLite, and across reopenings', ({ tempDir }) => {
    const path = join(tempDir, 'cache.sqlite');
    const store = new SqliteReplyStore(path);
    store.put('a', reply('{"criteria_met":true}'));
    expect((store.get('a') as { text: string }).text).toBe('{"criteria_met":true}');
    store.flush();
    expect(store.get('missing')).toBeUndefined();
    store.close();
    const reopened = new SqliteReplyStore(path);
    expect(reopened.get('a')).toEqual(reply('{"criteria_met":true}'));
    reopened.close();
    expect(journals(path)).toEqual([]);
  });

  test('with a recent-reply memory of 2 (a batch run), every reply beyond it is still read back, from the batch and from SQLite', ({ tempDir }) => {
    const store = new SqliteReplyStore(join(tempDir, 'cache.sqlite'), { recentReplies: 2 });
    for (let index = 0; index < 10; index += 1) store.put(`k${index}`, reply(`{"n":${index}}`));
    expect(Array.from({ length: 10 }, (_, index) => (store.get(`k${index}`) as { text: string }).text)).toEqual(Array.from({ length: 10 }, (_, index) => `{"n":${index}}`));
    store.flush();
    expect(Array.from({ length: 10 }, (_, index) => (store.get(`k${index}`) as { text: string }).text)).toEqual(Array.from({ length: 10 }, (_, index) => `{"n":${index}}`));
    store.close();
  });

  test('a process killed before its batch reached SQLite loses nothing: the next opening imports its journal', ({ tempDir }) => {
    const path = join(tempDir, 'cache.sqlite');
    const child = runScript(`
      const { SqliteReplyStore } = await import(${storeModule});
      const store = new SqliteReplyStore(${JSON.stringify(path)});
      for (let index = 0; index < 50; index += 1) store.put('key-' + index, { text: 'reply ' + index, usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 } });
      process.kill(process.pid, 'SIGKILL');`);
    expect(child.signal).toBe('SIGKILL');
    expect(journals(path)).toHaveLength(1);
    const store = new SqliteReplyStore(path);
    for (let index = 0; index < 50; index += 1) expect(store.get(`key-${index}`)).toEqual({ text: `reply ${index}`, usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 } });
    expect(journals(path)).toHaveLength(0);
    store.close();
    expect(existsSync(path)).toBe(true);
  });

  test('a cache locked by another process makes the batch wait with backoff, never an uncaught error from a timer', async ({ tempDir }) => {
    const path = join(tempDir, 'cache.sqlite');
    const store = new SqliteReplyStore(path);
    const holder = openSqlite(path);
    holder.pragma('busy_timeout = 0');
    holder.exec('BEGIN EXCLUSIVE');
    store.put('while-locked', reply('kept in the journal'));
    // The batch finds the lock several times (each a backoff on a timer), and the reply stays readable.
    await vi.waitFor(() => expect(store.busyWaits).toBeGreaterThanOrEqual(2), { timeout: hangGuard(10_000), interval: 20 });
    expect(store.get('while-locked')).toEqual(reply('kept in the journal'));
    expect(readFileSync(`${path}.journal-${process.pid}`, 'utf8')).toContain('while-locked');
    holder.exec('COMMIT');
    const select = holder.prepare<[string], { reply: string }>('SELECT reply FROM replies WHERE key = ?');
    await vi.waitFor(() => expect(select.get('while-locked')?.reply).toBe(JSON.stringify(reply('kept in the journal'))), { timeout: hangGuard(10_000), interval: 20 });
    holder.close();
    store.close();
    expect(journals(path)).toEqual([]);
  });

  test('closing a cache that stays locked keeps the last batch in the journal with a warning (no crash), and the next opening imports it', ({ tempDir }) => {
    const path = join(tempDir, 'cache.sqlite');
    new SqliteReplyStore(path).close();
    const holder = openSqlite(path);
    holder.pragma('busy_timeout = 0');
    holder.exec('BEGIN EXCLUSIVE');
    const child = runScript(`
      const { SqliteReplyStore } = await import(${storeModule});
      const store = new SqliteReplyStore(${JSON.stringify(path)}, { busyBoundMs: 200, closeBusyBoundMs: 200, onWarning: (message) => console.error('warning: ' + message) });
      store.put('paid', { text: 'paid reply', usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 } });
      store.close();
      console.log('closed');`);
    holder.exec('COMMIT');
    holder.close();
    expect(child.status, child.stderr).toBe(0);
    expect(child.stdout).toContain('closed');
    expect(child.stderr).toMatch(/warning: 1 replies could not be moved into the cache .* kept in .*journal/);
    expect(journals(path)).toHaveLength(1);
    const store = new SqliteReplyStore(path);
    expect(store.get('paid')).toEqual({ text: 'paid reply', usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 } });
    store.close();
    expect(journals(path)).toEqual([]);
  });

  test('a read-only cache file is refused when it is opened, naming the file and what to do', ({ tempDir }) => {
    const path = join(tempDir, 'cache.sqlite');
    new SqliteReplyStore(path).close();
    chmodSync(path, 0o444);
    // Root may write to a 0444 file anyway: the folder is also mounted read-only for the child when
    // bubblewrap is here (CI installs it), so the refusal is tested whoever runs the suite.
    const child = runScript(
      `
      const { SqliteReplyStore } = await import(${storeModule});
      try { new SqliteReplyStore(${JSON.stringify(path)}); console.log('opened'); }
      catch (error) { console.log(JSON.stringify({ code: error.code, message: error.message, field: error.details?.field })); }`,
      process.getuid?.() === 0 || existsSync(bwrapPath) ? { readOnlyFolder: tempDir } : {},
    );
    expect(child.status, `${child.error?.message ?? ''} ${child.stderr}`).toBe(0);
    const outcome = JSON.parse(child.stdout.trim()) as { code: string; message: string; field: string };
    expect(outcome.code).toBe('CONFIG_INVALID');
    expect(outcome.field).toBe('cache');
    expect(outcome.message).toContain(path);
    expect(outcome.message).toContain('read-only');
  });
});
