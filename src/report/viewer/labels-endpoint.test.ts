/**
 * The viewer's one write, `POST /labels?file=RUN` (hono's app.request): reviews saved beside the
 * run as a labels file `meta --labels` reads, only from the viewer's own page (its Origin), only
 * as JSON, bounded, each line checked, written atomically and never over the run itself.
 */
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { loadLabels } from '../../meta/labels.js';
import { test } from '../../testing/vitest-fixtures.js';
import { syntheticResultRecords } from '../synthetic.js';
import { openRunFolder } from './folder.js';
import { labelsPathOf, maximumLabelsBodyBytes } from './labels-endpoint.js';
import { createViewerApp } from './server.js';

const host = '127.0.0.1:8011';
const own = { host, origin: `http://${host}`, 'content-type': 'application/json' };

function runFolder(directory: string): { run: string; text: string } {
  const run = join(directory, 'run.jsonl');
  const text = [...syntheticResultRecords({ items: 2, criteriaPerItem: 2, seed: 3 })].map((record) => JSON.stringify(record)).join('\n') + '\n';
  writeFileSync(run, text);
  return { run, text };
}

const labels = [
  { id: 'item-00001', criterion_id: 'c0', label: true, reviewer: 'ana', time: '2026-12-07T10:00:00.000Z' },
  { id: 'item-00001', criterion_id: 'c1', label: 'cannot_assess', time: '2026-12-07T10:01:00.000Z', note: 'unclear' },
];

describe('rubricate view: POST /labels', () => {
  test('writes the reviews beside the run, as labels meta reads; the index does not list the file as a run', async ({ tempDir }) => {
    const { run } = runFolder(tempDir);
    const app = createViewerApp(openRunFolder(tempDir));
    const saved = await app.request('/labels?file=run.jsonl', { method: 'POST', headers: own, body: JSON.stringify({ labels }) });
    expect(saved.status).toBe(200);
    expect(await saved.json()).toEqual({ file: 'run.labels.jsonl', labels: 2 });
    expect(labelsPathOf(run)).toBe(join(tempDir, 'run.labels.jsonl'));
    expect(readFileSync(join(tempDir, 'run.labels.jsonl'), 'utf8')).toBe(labels.map((line) => `${JSON.stringify(line)}\n`).join(''));
    const read = await loadLabels(join(tempDir, 'run.labels.jsonl'));
    expect(read.invalid).toEqual([]);
    expect(read.byItem.get('item-00001')?.get('c0')).toEqual([true]);
    const index = await (await app.request('/', { headers: { host } })).text();
    expect(index).not.toContain('run.labels.jsonl');
  });

  test('refuses another page, a body that is not JSON, one too large, a bad label line, an unknown run, and a target that is the run', async ({ tempDir }) => {
    const { run, text } = runFolder(tempDir);
    const app = createViewerApp(openRunFolder(tempDir));
    const post = (headers: Record<string, string>, body: string, file = 'run.jsonl') => app.request(`/labels?file=${encodeURIComponent(file)}`, { method: 'POST', headers, body });
    const body = JSON.stringify({ labels });
    const { origin: _origin, ...noOrigin } = own;
    expect((await post(noOrigin, body)).status).toBe(403);
    expect((await post({ ...own, origin: 'http://evil.example' }, body)).status).toBe(403);
    expect((await post({ ...own, origin: 'http://127.0.0.1:9999' }, body)).status).toBe(403);
    expect((await post({ ...own, host: 'evil.example:8011', origin: 'http://evil.example:8011' }, body)).status).toBe(403);
    expect((await post({ ...own, 'content-type': 'text/plain' }, body)).status).toBe(415);
    expect((await post({ ...own, 'content-length': String(maximumLabelsBodyBytes + 1) }, body)).status).toBe(413);
    const bad = await post(own, JSON.stringify({ labels: [{ id: 'item-00001', criterion_id: 'c0', label: 'maybe' }] }));
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain('labels[0]');
    expect((await post(own, body, 'missing.jsonl')).status).toBe(404);
    // The labels file a link to the run: writing it would replace the input.
    symlinkSync(run, join(tempDir, 'run.labels.jsonl'));
    const conflict = await post(own, body);
    expect(conflict.status).toBe(400);
    expect(((await conflict.json()) as { error: { code: string } }).error.code).toBe('OUTPUT_CONFLICT');
    expect(readFileSync(run, 'utf8')).toBe(text);
    // Every other write is still refused.
    expect((await app.request('/', { method: 'POST', headers: own, body })).status).toBe(405);
  });
});
