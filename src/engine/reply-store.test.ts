import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteReplyStore } from './reply-store.js';

const reply = (text: string) => ({ text, usage: { inputTokens: 10, outputTokens: 2, cachedInputTokens: 0 } });

describe('SqliteReplyStore', () => {
  it('reads back what it stored, before and after the batch reaches SQLite, and across reopenings', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'rubricate-store-')), 'cache.sqlite');
    const store = new SqliteReplyStore(path);
    store.put('a', reply('{"criteria_met":true}'));
    expect(store.get('a')?.text).toBe('{"criteria_met":true}');
    store.flush();
    expect(store.get('a')?.text).toBe('{"criteria_met":true}');
    expect(store.get('missing')).toBeUndefined();
    store.close();
    const reopened = new SqliteReplyStore(path);
    expect(reopened.get('a')?.usage.inputTokens).toBe(10);
    reopened.close();
    expect(readdirSync(join(path, '..')).some((name) => name.includes('.journal-'))).toBe(false);
  });

  it('a process killed before its batch reached SQLite loses nothing: the next opening imports its journal', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'rubricate-store-')), 'cache.sqlite');
    // A child process stores replies and is killed (SIGKILL) without closing the store.
    const script = `
      const { SqliteReplyStore } = await import(${JSON.stringify(new URL('./reply-store.ts', import.meta.url).href)});
      const store = new SqliteReplyStore(${JSON.stringify(path)});
      for (let index = 0; index < 50; index += 1) store.put('key-' + index, { text: 'reply ' + index, usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 } });
      process.kill(process.pid, 'SIGKILL');`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(child.signal).toBe('SIGKILL');
    expect(readdirSync(join(path, '..')).filter((name) => name.includes('.journal-'))).toHaveLength(1);
    const store = new SqliteReplyStore(path);
    for (let index = 0; index < 50; index += 1) expect(store.get(`key-${index}`)?.text).toBe(`reply ${index}`);
    expect(readdirSync(join(path, '..')).filter((name) => name.includes('.journal-'))).toHaveLength(0);
    store.close();
    expect(existsSync(path)).toBe(true);
  });
});
