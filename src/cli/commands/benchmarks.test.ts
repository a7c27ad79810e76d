/**
 * `rubricate benchmarks` counts its packs one after the other: a bar of packs on a terminal while
 * it does, nothing on a pipe (the other commands' rule). The packs here have no data present (an
 * empty data folder), so each is listed at once as "data not present".
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultPrices } from '../../engine/usage.js';
import { benchmarkPacks, findBenchmark } from '../../pipeline/benchmark-packs.js';
import { listingsOf } from './benchmarks.js';

function fakeStream(isTTY: boolean): { stream: NodeJS.WriteStream; shown: () => string } {
  const written: string[] = [];
  const stream = {
    isTTY,
    columns: 160,
    write: (chunk: unknown) => (written.push(String(chunk)), true),
    on: () => stream,
    once: () => stream,
    removeListener: () => stream,
  } as unknown as NodeJS.WriteStream;
  // What the terminal shows: the text without its cursor and colour escapes.
  // eslint-disable-next-line no-control-regex -- the escapes are what is removed
  return { stream, shown: () => written.join('').replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '') };
}

describe('rubricate benchmarks: progress while counting packs', () => {
  const empty = mkdtempSync(join(tmpdir(), 'rubricate-no-data-'));
  afterAll(() => rmSync(empty, { recursive: true, force: true }));
  const packs = benchmarkPacks.names().map((name) => findBenchmark(name, { RUBRICATE_DATA_DIR: empty }));

  it('draws a bar of packs on a terminal, ending at every pack counted', async () => {
    const { stream, shown } = fakeStream(true);
    const listings = await listingsOf(packs, defaultPrices, stream);
    expect(listings.map((listing) => listing.benchmark)).toEqual(benchmarkPacks.names());
    expect(listings.every((listing) => listing.size === null)).toBe(true);
    expect(shown()).toContain(`counting benchmark packs`);
    expect(shown()).toContain(`${packs.length}/${packs.length} |`);
    // Counting makes no model call: the bar says nothing of calls or cache hits.
    expect(shown()).not.toContain('calls');
  });

  it('writes nothing on a pipe', async () => {
    const { stream, shown } = fakeStream(false);
    const listings = await listingsOf(packs, defaultPrices, stream);
    expect(listings).toHaveLength(packs.length);
    expect(shown()).toBe('');
  });
});
