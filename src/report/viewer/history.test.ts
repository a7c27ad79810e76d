/**
 * The run history in the viewer (hono's app.request, no browser): `view` with no folder lists the
 * index's runs wherever they are (missing ones said, links not followed), and a run the index
 * says is running is live: its page reloads itself and its state grows as lines are appended.
 */
import { appendFileSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { readEmbeddedPayload } from '../encoding.js';
import { startRunRecording } from '../../results/run-index.js';
import type { ResultRecord } from '../../results/results.js';
import { test } from '../../testing/vitest-fixtures.js';
import { syntheticResultRecords } from '../synthetic.js';
import type { ResultsReportPayload, RunsIndexPayload } from '../types.js';
import { openRunFolder } from './folder.js';
import { openRunHistory, withRunHistory } from './history.js';
import { createViewerApp } from './server.js';

const loopback = { headers: { host: '127.0.0.1:8011' } };
const lineOf = (record: ResultRecord) => `${JSON.stringify(record)}\n`;

function payloadOf(html: string): unknown {
  const match = /<script type="application\/json" id="rubricate-payload" data-encoding="([^"]+)">([^<]*)<\/script>/.exec(html);
  if (!match) throw new Error('no payload in the page');
  return readEmbeddedPayload({ encoding: match[1] as 'json', text: match[2] });
}

describe('rubricate view: the run history', () => {
  test('lists the runs of the index across folders; a missing file is said, a link is not followed', async ({ tempDir }) => {
    const root = realpathSync(tempDir);
    const index = join(root, 'runs.jsonl');
    mkdirSync(join(root, 'one'));
    mkdirSync(join(root, 'two'));
    const records = [...syntheticResultRecords({ items: 4, criteriaPerItem: 2, seed: 3 })];
    writeFileSync(join(root, 'one/a.jsonl'), records.map(lineOf).join(''));
    writeFileSync(join(root, 'two/b.jsonl'), records.slice(0, 2).map(lineOf).join(''));
    symlinkSync(join(root, 'one/a.jsonl'), join(root, 'two/link.jsonl'));
    const record = (results: string, judges: string[] = ['openai:gpt-4.1']) => startRunRecording(index, { results, command: 'grade', judges }, () => undefined)!;
    record(join(root, 'one/a.jsonl'), ['scripted:mixed']).end('finished', { items: { n: 4, ok: 4, error: 0, invalid: 0 } });
    record(join(root, 'two/b.jsonl')).end('interrupted');
    record(join(root, 'two/gone.jsonl')).end('finished');
    record(join(root, 'two/link.jsonl')).end('finished');

    const app = createViewerApp(openRunHistory(index));
    const page = payloadOf(await (await app.request('/', loopback)).text()) as RunsIndexPayload;
    expect(page.runs.map((run) => [run.file, run.history?.status, run.history?.madeUp, run.summary?.metrics.n])).toEqual([
      [join(root, 'two/b.jsonl'), 'interrupted', false, 2],
      [join(root, 'one/a.jsonl'), 'finished', true, 4],
    ]);
    expect(page.skipped).toEqual([
      { file: join(root, 'two/link.jsonl'), reason: expect.stringMatching(/^a link: not followed \(grade finished/) },
      { file: join(root, 'two/gone.jsonl'), reason: expect.stringMatching(/^missing: the results file is no longer there/) },
    ]);
    expect((await app.request(`/run?file=${encodeURIComponent(join(root, 'one/a.jsonl'))}`, loopback)).status).toBe(200);
    // Neither a link the index names nor a file it does not name is opened.
    expect((await app.request(`/run?file=${encodeURIComponent(join(root, 'two/link.jsonl'))}`, loopback)).status).toBe(404);
    writeFileSync(join(root, 'two/other.jsonl'), records.map(lineOf).join(''));
    expect((await app.request(`/run?file=${encodeURIComponent(join(root, 'two/other.jsonl'))}`, loopback)).status).toBe(404);
    expect((await app.request(`/api/run-state?file=${encodeURIComponent(join(root, 'two/other.jsonl'))}`, loopback)).status).toBe(404);
  });

  test('lists the newest runs only, and says how many older ones it leaves out', async ({ tempDir }) => {
    const root = realpathSync(tempDir);
    const index = join(root, 'runs.jsonl');
    const records = [...syntheticResultRecords({ items: 1, criteriaPerItem: 1, seed: 6 })];
    for (const name of ['a', 'b', 'c']) {
      writeFileSync(join(root, `${name}.jsonl`), records.map(lineOf).join(''));
      startRunRecording(index, { results: join(root, `${name}.jsonl`), command: 'grade', judges: [] }, () => undefined)!.end('finished');
    }
    const app = createViewerApp(openRunHistory(index, { maximumRuns: 2 }));
    const page = payloadOf(await (await app.request('/', loopback)).text()) as RunsIndexPayload;
    expect(page.runs.map((run) => run.file)).toEqual([join(root, 'c.jsonl'), join(root, 'b.jsonl')]);
    expect(page.skipped).toEqual([{ file: index, reason: '1 older runs not listed (the newest 2 are)' }]);
    expect((await app.request(`/run?file=${encodeURIComponent(join(root, 'a.jsonl'))}`, loopback)).status).toBe(404);
  });

  test('a running run is live: its page reloads itself, and its state and report grow as lines are appended', async ({ tempDir }) => {
    const root = realpathSync(tempDir);
    const index = join(root, 'runs.jsonl');
    const results = join(root, 'live.jsonl');
    const records = [...syntheticResultRecords({ items: 3, criteriaPerItem: 2, seed: 4 })];
    writeFileSync(results, lineOf(records[0]));
    const recording = startRunRecording(index, { results, command: 'grade', judges: ['openai:gpt-4.1'] }, () => undefined)!;
    const app = createViewerApp(openRunHistory(index));
    const query = encodeURIComponent(results);
    const state = async () => (await app.request(`/api/run-state?file=${query}`, loopback)).json();
    const report = async () => (await app.request(`/run?file=${query}`, loopback)).text();

    expect(await state()).toEqual({ file: results, bytes: lineOf(records[0]).length, lines: 1, status: 'running', live: true });
    const first = await report();
    expect(first).toContain('<meta http-equiv="refresh" content="3">');
    expect(first).toContain('data-testid="live-banner"');
    expect((payloadOf(first) as ResultsReportPayload).runs[0].summary.metrics.n).toBe(1);
    const listing = payloadOf(await (await app.request('/', loopback)).text()) as RunsIndexPayload;
    expect(listing.runs.map((run) => run.history?.live)).toEqual([true]);

    // A line being written counts once its newline lands.
    appendFileSync(results, lineOf(records[1]) + lineOf(records[2]).slice(0, 20));
    expect(await state()).toMatchObject({ lines: 2, live: true });
    appendFileSync(results, lineOf(records[2]).slice(20));
    expect(await state()).toMatchObject({ lines: 3 });
    expect((payloadOf(await report()) as ResultsReportPayload).runs[0].summary.metrics.n).toBe(3);

    recording.end('finished', { items: { n: 3, ok: 3, error: 0, invalid: 0 } });
    const done = await report();
    expect(done).not.toContain('http-equiv="refresh"');
    expect(await state()).toMatchObject({ status: 'finished', live: false });
  });

  test('a folder\'s runs are labelled from the index, and live there too', async ({ tempDir }) => {
    const root = realpathSync(tempDir);
    mkdirSync(join(root, 'runs'));
    const records = [...syntheticResultRecords({ items: 2, criteriaPerItem: 2, seed: 5 })];
    writeFileSync(join(root, 'runs/a.jsonl'), records.map(lineOf).join(''));
    writeFileSync(join(root, 'runs/b.jsonl'), records.map(lineOf).join(''));
    const index = join(root, 'runs.jsonl');
    startRunRecording(index, { results: join(root, 'runs/a.jsonl'), command: 'grade', judges: [] }, () => undefined);
    const app = createViewerApp(withRunHistory(openRunFolder(join(root, 'runs')), index));
    const listing = payloadOf(await (await app.request('/', loopback)).text()) as RunsIndexPayload;
    expect(listing.runs.map((run) => [run.file, run.history?.status])).toEqual([['a.jsonl', 'running'], ['b.jsonl', undefined]]);
    expect(await (await app.request('/run?file=a.jsonl', loopback)).text()).toContain('data-testid="live-banner"');
    expect(await (await app.request('/run?file=b.jsonl', loopback)).text()).not.toContain('data-testid="live-banner"');
    expect(await (await app.request('/api/run-state?file=b.jsonl', loopback)).json()).toMatchObject({ lines: 2, status: null, live: false });
  });
});
