/**
 * Made-up verdicts where a person looks, in headless Chromium: a report of a scripted run (and of
 * a fake-judge run, whose provenance names a real model) opens with a banner saying so, before any
 * figure; its Markdown summary does too; the viewer's run list shows such a run as scripted, with
 * no model name and no cost, beside a model's run shown as before.
 */
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect } from 'vitest';
import type { ResultRecord } from '../results/results.js';
import { scriptedLabel } from '../util/made-up.js';
import { browserTest as test } from './browser-fixture.js';
import { chromiumAvailable, chromiumPath, openOfflinePage, type HeadlessBrowser } from './headless.js';
import { writeReportFromResults } from './index.js';
import { syntheticResultRecords } from './synthetic.js';
import { startViewer, type RunningViewer } from './viewer/server.js';
import { runCliCaptured } from '../cli/in-process.js';

const haveBrowser = chromiumAvailable();
if (!haveBrowser) console.warn(`made-up browser test skipped: ${chromiumPath} is absent (install it with: apt-get install -y chromium)`);

let browser: HeadlessBrowser | undefined;
let viewer: RunningViewer | undefined;
test.beforeAll(async ({ openBrowserContext }) => {
  if (haveBrowser) browser = await openBrowserContext({ width: 1360, height: 900 });
});
afterAll(async () => {
  await viewer?.close();
  await browser?.close();
});

async function ready(page: Page): Promise<void> {
  await page.waitForSelector('html[data-report-ready], html[data-report-error]', { state: 'attached' });
  expect(await page.getAttribute('html', 'data-report-error')).toBeNull();
}

/** A synthetic run (its provenance says openai:gpt-4.1-mini), its verdicts explained as fake-judge explains them. */
function fakeJudgeRun(seed: number): ResultRecord[] {
  return [...syntheticResultRecords({ items: 6, criteriaPerItem: 3, seed, errorRate: 0 })].map((record) => ({
    ...record,
    criteria: record.criteria.map((criterion) => (criterion.source === 'judge' ? { ...criterion, explanation: scriptedLabel } : criterion)),
  }));
}

function scriptedRun(seed: number): ResultRecord[] {
  return [...syntheticResultRecords({ items: 6, criteriaPerItem: 3, seed, errorRate: 0 })].map((record) => ({ ...record, judge: { ...record.judge!, id: 'scripted:mixed', model: 'scripted' } }));
}

const write = (file: string, records: ResultRecord[]) => writeFileSync(file, records.map((record) => JSON.stringify(record)).join('\n') + '\n');

describe.skipIf(!haveBrowser)('made-up verdicts in the report and the viewer', () => {
  test('the report header banner (HTML and Markdown) names who made the verdicts up; a model run has none', async ({ tempDir }) => {
    for (const [name, records, by] of [['faked', fakeJudgeRun(3), 'rubricate fake-judge (scripted)'], ['scripted', scriptedRun(4), 'scripted:mixed']] as const) {
      const input = join(tempDir, `${name}.jsonl`);
      write(input, records);
      const out = join(tempDir, `${name}.html`);
      const markdown = join(tempDir, `${name}.md`);
      await writeReportFromResults({ input, out });
      await writeReportFromResults({ input, out: markdown });
      const { page, errors } = await openOfflinePage(browser!, pathToFileURL(out).href);
      await ready(page);
      const banner = await page.textContent('[data-testid="made-up-banner"]');
      expect(banner).toContain(`made up: these verdicts come from a scripted judge, not a model (${by})`);
      // In the header: before the overview and its figures.
      // Node.DOCUMENT_POSITION_FOLLOWING is 4: the overview comes after the banner.
      expect(await page.evaluate(`Boolean(document.querySelector('[data-testid="made-up-banner"]').compareDocumentPosition(document.getElementById('overview')) & 4)`)).toBe(true);
      expect(await page.textContent('[data-testid="cost"]')).not.toMatch(/\$0\.0*[1-9]/);
      expect(errors).toEqual([]);
      await page.close();
      const lines = readFileSync(markdown, 'utf8').split('\n');
      expect(lines[2]).toContain(`made up: these verdicts come from a scripted judge, not a model (${by})`);
    }
    const real = join(tempDir, 'real.jsonl');
    write(real, [...syntheticResultRecords({ items: 6, criteriaPerItem: 3, seed: 5, errorRate: 0 })]);
    await writeReportFromResults({ input: real, out: join(tempDir, 'real.html') });
    const { page } = await openOfflinePage(browser!, pathToFileURL(join(tempDir, 'real.html')).href);
    await ready(page);
    expect(await page.locator('[data-testid="made-up-banner"]').count()).toBe(0);
    await page.close();
  });

  test('the viewer lists a made-up run as scripted, with no model name and no cost', async ({ tempDir }) => {
    const folder = join(tempDir, 'runs');
    mkdirSync(folder);
    write(join(folder, 'faked.jsonl'), fakeJudgeRun(7));
    write(join(folder, 'real.jsonl'), [...syntheticResultRecords({ items: 6, criteriaPerItem: 3, seed: 8, errorRate: 0 })]);
    viewer = await startViewer({ folder, port: 0 });
    const { page, errors } = await openOfflinePage(browser!, viewer.url, { allowOrigin: new URL(viewer.url).origin });
    await ready(page);
    const row = (file: string) => page.innerText(`#runs .vrow[data-file="${file}"]`);
    const faked = await row('faked.jsonl');
    expect(faked).toContain('scripted (made up)');
    expect(faked).not.toContain('gpt-4.1-mini');
    expect(faked).not.toContain('$');
    const real = await row('real.jsonl');
    expect(real).toContain('gpt-4.1-mini');
    expect(real).toMatch(/\$\d/);
    expect(errors).toEqual([]);
    await page.close();
  });

  test('a compare run, a meta-evaluation and a probe report of a scripted judge carry the banner too', async ({ tempDir }) => {
    const items = join(import.meta.dirname, '../../examples/items.jsonl');
    const results = join(tempDir, 'results.jsonl');
    expect((await runCliCaptured(['grade', '--input', items, '--judge', 'scripted:mixed', '--no-cache', '--quiet', '--out', results])).code).toBe(0);
    const meta = join(tempDir, 'meta.json');
    await runCliCaptured(['meta', '--format', 'results', '--input', results, '--labels', join(import.meta.dirname, '../../examples/labels/items-labels.jsonl'), '--out', meta, '--quiet', '--bootstrap-resamples', '0']);
    const probe = join(tempDir, 'probe.json');
    await runCliCaptured(['probe', '--input', items, '--judge', 'scripted:mixed', '--probes', 'padding', '--no-cache', '--quiet', '--bootstrap-resamples', '0', '--out', probe]);
    const compared = join(tempDir, 'compared.jsonl');
    await runCliCaptured(['compare', '--input', join(import.meta.dirname, '../../examples/pairs/pairs.jsonl'), '--judge', 'scripted:mixed', '--no-cache', '--quiet', '--out', compared]);
    for (const input of [meta, probe, compared]) {
      const out = `${input}.html`;
      await writeReportFromResults({ input, out });
      const { page, errors } = await openOfflinePage(browser!, pathToFileURL(out).href);
      await ready(page);
      expect(await page.textContent('[data-testid="made-up-banner"]'), input).toContain('made up: these verdicts come from a scripted judge, not a model (scripted:mixed)');
      expect(errors).toEqual([]);
      await page.close();
      const markdown = `${input}.md`;
      await writeReportFromResults({ input, out: markdown });
      expect(readFileSync(markdown, 'utf8').split('\n')[2], input).toContain('made up: these verdicts come from a scripted judge, not a model (scripted:mixed)');
    }
  });
});
