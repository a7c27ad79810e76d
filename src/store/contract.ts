/**
 * The reply-store contract, shared by every implementation's tests: each runs the same
 * cases against its own backing (a temp SQLite file, a real redis-server).
 */
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { JudgeReply } from '../judges/types.js';
import { test } from '../testing/vitest-fixtures.js';
import { openReplyStore } from './open.js';
import type { TransferableReplyStore } from './types.js';
import { hangGuard } from '../testing/hang-guard.js';

export interface ContractSubject {
  /** What `openReplyStore` takes: a file path or a redis:// URL. */
  spec: string;
  /** Writes an entry's stored text as is, bypassing the store (to plant damaged entries). */
  writeRaw(key: string, text: string): Promise<void>;
  dispose(): Promise<void>;
}

const reply = (text: string, inputTokens = 10): JudgeReply => ({ text, usage: { inputTokens, outputTokens: 2, cachedInputTokens: 0 } });

async function closeStore(store: TransferableReplyStore): Promise<void> {
  await store.close();
}

/** Runs the contract on the backing `setup` makes; `folder` is a temporary folder for its files, removed after the test file. */
export function describeReplyStoreContract(name: string, setup: (folder: string) => Promise<ContractSubject>): void {
  describe(`reply store contract: ${name}`, () => {
    let subject: ContractSubject;
    test.beforeAll(async ({ fileTempDir }) => {
      subject = await setup(fileTempDir);
    });
    afterAll(async () => {
      await subject?.dispose();
    });

    it('reads back a stored reply, in the same store and in another one opened on the same backing', async () => {
      const writer = openReplyStore(subject.spec);
      await writer.put('same-key', reply('{"criteria_met":true}'));
      expect((await writer.get('same-key'))?.text).toBe('{"criteria_met":true}');
      expect(await writer.get('absent-key')).toBeUndefined();
      // Another process's store sees it once the writer's batch lands (at once on Redis, within a fraction of a second on SQLite).
      const reader = openReplyStore(subject.spec);
      await vi.waitFor(async () => expect(await reader.get('same-key')).toEqual(reply('{"criteria_met":true}')), { timeout: hangGuard(5_000), interval: 25 });
      await closeStore(reader);
      await closeStore(writer);
    });

    it('treats damaged entries as absent: not JSON, or JSON that is not a judge reply', async () => {
      const damaged = ['{"text": "cut sho', '{}', '42', '"a string"', 'null', '[]', '{"text": 1, "usage": {}}', '{"text": "ok"}', '{"text": "ok", "usage": {"inputTokens": -1}}'];
      for (const [index, text] of damaged.entries()) await subject.writeRaw(`damaged-${index}`, text);
      const store = openReplyStore(subject.spec);
      for (const index of damaged.keys()) expect(await store.get(`damaged-${index}`), damaged[index]).toBeUndefined();
      // A damaged entry is simply replaced by the next reply stored under its key.
      await store.put('damaged-1', reply('fresh'));
      expect((await store.get('damaged-1'))?.text).toBe('fresh');
      await closeStore(store);
    });

    it('lets entries expire after the TTL when one is set', async () => {
      const store = openReplyStore(subject.spec, { ttlMs: 150 });
      await store.put('expiring', reply('soon gone'));
      expect((await store.get('expiring'))?.text).toBe('soon gone');
      await vi.waitFor(async () => expect(await store.get('expiring')).toBeUndefined(), { timeout: hangGuard(5_000), interval: 50 });
      const lasting = openReplyStore(subject.spec);
      await lasting.put('lasting', reply('kept'));
      expect((await lasting.get('lasting'))?.text).toBe('kept');
      await closeStore(lasting);
      await closeStore(store);
    });

    it('lists its entries under the same keys it was given, for export and import', async () => {
      const store = openReplyStore(subject.spec);
      await store.putMany([
        ['listed-a', reply('a')],
        ['listed-b', reply('b', 3)],
      ]);
      const listed = new Map<string, JudgeReply>();
      for await (const [key, value] of store.entries()) listed.set(key, value);
      expect(listed.get('listed-a')).toEqual(reply('a'));
      expect(listed.get('listed-b')).toEqual(reply('b', 3));
      expect([...listed.keys()].some((key) => key.startsWith('damaged-') && key !== 'damaged-1')).toBe(false);
      await closeStore(store);
    });

    it('a process killed with SIGKILL right after storing loses nothing: another store reads every reply', async () => {
      const script = `
        const { openReplyStore } = await import(${JSON.stringify(new URL('./open.ts', import.meta.url).href)});
        const store = openReplyStore(${JSON.stringify(subject.spec)});
        for (let index = 0; index < 50; index += 1) await store.put('killed-' + index, { text: 'reply ' + index, usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 } });
        process.kill(process.pid, 'SIGKILL');`;
      const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
      expect(child.signal, child.stderr).toBe('SIGKILL');
      const store = openReplyStore(subject.spec);
      for (let index = 0; index < 50; index += 1) expect((await store.get(`killed-${index}`))?.text).toBe(`reply ${index}`);
      await closeStore(store);
    });
  });
}
