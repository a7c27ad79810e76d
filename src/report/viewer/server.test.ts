/**
 * The viewer's server without a browser (hono's app.request): it answers only the loopback
 * Host and only GET, reads only files it found by walking its folder (a path in a query is
 * never opened), says why a comparison cannot be made, and computes comparisons with the
 * report's own paired bootstrap. The pages themselves are exercised in viewer.browser.test.ts.
 */
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { runCliCaptured } from '../../cli/in-process.js';
import { exitCodes } from '../../errors.js';
import type { ResultRecord } from '../../results/results.js';
import { deriveSeed, defaultBootstrapSeed } from '../../statistics/bootstrap.js';
import { test } from '../../testing/vitest-fixtures.js';
import { collectRun } from '../collect.js';
import { readEmbeddedPayload } from '../encoding.js';
import { compareRuns, pairedDifference } from '../compare.js';
import { syntheticResultRecords } from '../synthetic.js';
import type { RunsComparePayload, RunsIndexPayload } from '../types.js';
import { compareManyRuns } from './compare-runs.js';
import { openRunFolder } from './folder.js';
import { createViewerApp } from './server.js';

function write(file: string, records: readonly ResultRecord[]): void {
  writeFileSync(file, records.map((record) => JSON.stringify(record)).join('\n') + '\n');
}

/** The payload a page embeds. */
function payloadOf(html: string): unknown {
  const match = /<script type="application\/json" id="rubricate-payload" data-encoding="([^"]+)">([^<]*)<\/script>/.exec(html);
  if (!match) throw new Error('no payload in the page');
  return readEmbeddedPayload({ encoding: match[1] as 'json', text: match[2] });
}

const loopback = { headers: { host: '127.0.0.1:8011' } };

describe('rubricate view: the server', () => {
  test('lists the folder\'s runs and answers only GET for the loopback host, reading only files of the folder', async ({ tempDir }) => {
    const folder = join(tempDir, 'runs');
    mkdirSync(join(folder, 'deep'), { recursive: true });
    write(join(folder, 'a.jsonl'), [...syntheticResultRecords({ items: 5, criteriaPerItem: 3, seed: 1 })]);
    write(join(folder, 'deep', 'b.jsonl'), [...syntheticResultRecords({ items: 5, criteriaPerItem: 3, seed: 2 })]);
    writeFileSync(join(tempDir, 'outside.jsonl'), JSON.stringify(syntheticResultRecords({ items: 1, criteriaPerItem: 1 }).next().value) + '\n');
    // A link out of the folder is not followed.
    symlinkSync(join(tempDir, 'outside.jsonl'), join(folder, 'link.jsonl'));
    const app = createViewerApp(openRunFolder(folder));

    const index = await app.request('/', loopback);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const payload = payloadOf(await index.text()) as RunsIndexPayload;
    expect(payload.runs.map((entry) => [entry.file, entry.kind, entry.summary?.metrics.n])).toEqual([['a.jsonl', 'results', 5], ['deep/b.jsonl', 'results', 5]]);

    expect((await app.request('/', { headers: { host: 'evil.example:8011' } })).status).toBe(403);
    expect((await app.request('/', { method: 'POST', ...loopback })).status).toBe(405);
    for (const name of ['../outside.jsonl', join(tempDir, 'outside.jsonl'), 'link.jsonl', 'deep/../a.jsonl']) {
      const page = await app.request(`/run?file=${encodeURIComponent(name)}`, loopback);
      expect(page.status, name).toBe(404);
    }
    expect((await app.request('/run?file=deep%2Fb.jsonl', loopback)).status).toBe(200);
    const one = await app.request('/compare?run=a.jsonl', loopback);
    expect(one.status).toBe(400);
    expect(await one.text()).toContain('A comparison needs at least two runs');
    expect((await app.request('/compare?run=a.jsonl&run=a.jsonl', loopback)).status).toBe(400);
    expect((await app.request('/compare?run=a.jsonl&run=missing.jsonl', loopback)).status).toBe(404);
    const compared = payloadOf(await (await app.request('/compare?run=deep%2Fb.jsonl&run=a.jsonl', loopback)).text()) as RunsComparePayload;
    expect(compared.files).toEqual(['deep/b.jsonl', 'a.jsonl']);
    expect(compared.runs.map((run) => run.summary.label)).toEqual(['b.jsonl', 'a.jsonl']);
  });

  test('a listed run replaced by a link after the index was served is refused when it is read, as is a folder replaced by one', async ({ tempDir }) => {
    const folder = join(tempDir, 'runs');
    mkdirSync(join(folder, 'deep'), { recursive: true });
    write(join(folder, 'a.jsonl'), [...syntheticResultRecords({ items: 4, criteriaPerItem: 2, seed: 1 })]);
    write(join(folder, 'b.jsonl'), [...syntheticResultRecords({ items: 4, criteriaPerItem: 2, seed: 2 })]);
    write(join(folder, 'deep', 'c.jsonl'), [...syntheticResultRecords({ items: 4, criteriaPerItem: 2, seed: 3 })]);
    // What a link would lead to: a results file outside the folder, with a text that must never be shown.
    const secret = join(tempDir, 'secret');
    mkdirSync(secret);
    write(join(secret, 'c.jsonl'), [...syntheticResultRecords({ items: 6, criteriaPerItem: 2, seed: 9 })].map((record) => ({ ...record, id: 'SECRET-ITEM' })));
    const app = createViewerApp(openRunFolder(folder));
    const index = payloadOf(await (await app.request('/', loopback)).text()) as RunsIndexPayload;
    expect(index.runs.map((entry) => entry.file)).toEqual(['a.jsonl', 'b.jsonl', 'deep/c.jsonl']);
    expect((await app.request('/run?file=a.jsonl', loopback)).status).toBe(200);
    expect((await app.request('/compare?run=a.jsonl&run=b.jsonl', loopback)).status).toBe(200);

    // The index was served and the runs read (and kept in memory); then the files are swapped for links.
    rmSync(join(folder, 'a.jsonl'));
    symlinkSync(join(secret, 'c.jsonl'), join(folder, 'a.jsonl'));
    renameSync(join(folder, 'deep'), join(tempDir, 'deep-moved'));
    symlinkSync(secret, join(folder, 'deep'));
    for (const path of ['/run?file=a.jsonl', '/compare?run=b.jsonl&run=a.jsonl', '/compare?run=a.jsonl&run=b.jsonl', '/run?file=deep%2Fc.jsonl', '/run?file=b.jsonl&compare=a.jsonl']) {
      const page = await app.request(path, loopback);
      const body = await page.text();
      expect(page.status, path).toBe(404);
      expect(body, path).toMatch(/is no longer a file of this folder \((a\.jsonl|deep) is a link\)|is not a file of this folder/);
      expect(body, path).not.toContain('SECRET-ITEM');
    }
    // The file that was not touched is still served, and the index no longer lists the links.
    expect((await app.request('/run?file=b.jsonl', loopback)).status).toBe(200);
    const again = payloadOf(await (await app.request('/', loopback)).text()) as RunsIndexPayload;
    expect(again.runs.map((entry) => entry.file)).toEqual(['b.jsonl']);
  });

  test('compares many runs with the two-run comparison and the seeded paired bootstrap, over the union of their items', async ({ tempDir }) => {
    const files = [0, 0.2, -0.1].map((shift, index) => {
      const file = join(tempDir, `run-${index}.jsonl`);
      const records = [...syntheticResultRecords({ items: 25, criteriaPerItem: 4, seed: 3, qualityShift: shift, errorRate: 0.05 })];
      write(file, index === 2 ? [...records.slice(2), { ...records[0], id: 'extra' }] : records);
      return file;
    });
    const runs = await Promise.all(files.map((file) => collectRun(file, { keepTagScores: true })));
    const many = compareManyRuns(runs, { bootstrapSamples: 200 });
    expect(many.comparisons).toEqual([compareRuns(runs[1], runs[0], { bootstrapSamples: 200 }), compareRuns(runs[2], runs[0], { bootstrapSamples: 200 })]);
    const scored = (row: number, column: number) => {
      const pairs: Array<[number, number]> = [];
      for (const [id, index] of runs[row].indexById) {
        const other = runs[column].indexById.get(id);
        const a = runs[row].data.items.scores[index];
        const b = other === undefined ? null : runs[column].data.items.scores[other];
        if (a !== null && b !== null) pairs.push([a, b]);
      }
      return pairs;
    };
    const pairs = scored(0, 2);
    expect(many.matrix[0][2]).toEqual(pairedDifference(pairs.map(([a]) => a), pairs.map(([, b]) => b), 200, deriveSeed(defaultBootstrapSeed, 'runs:0:2')));
    expect(many.matrix[2][0]!.difference).toBeCloseTo(-many.matrix[0][2]!.difference, 12);
    expect(many.matrix[2][0]!.ci95).toEqual([-many.matrix[0][2]!.ci95[1], -many.matrix[0][2]!.ci95[0]]);
    expect(many.matrix[1][1]).toBeNull();
    expect(many.grid.ids).toEqual([...runs[0].indexById.keys(), 'extra']);
    expect(many.grid.items[2].slice(0, 3)).toEqual([-1, -1, 0]);
    expect(many.grid.items[0].at(-1)).toBe(-1);
  });

  test('the command refuses what is not a folder', async ({ tempDir }) => {
    const missing = await runCliCaptured(['view', join(tempDir, 'nowhere')]);
    expect(missing.code).toBe(exitCodes.usage);
    expect(missing.stderr).toContain('cannot read the folder');
    const file = join(tempDir, 'file.jsonl');
    writeFileSync(file, '');
    const notFolder = await runCliCaptured(['view', file]);
    expect(notFolder.code).toBe(exitCodes.usage);
    expect(notFolder.stderr).toContain('not a folder');
  });
});
