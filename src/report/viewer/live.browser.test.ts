/**
 * A live run in Chromium: `rubricate view` over the run history shows a run the index says is
 * running as live in its index, and the run's page reloads itself with the items written since,
 * until the run's end line lands. Waits are for what the page shows (a count, a label), not for time.
 */
import { appendFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect } from 'vitest';
import { startRunRecording } from '../../results/run-index.js';
import type { ResultRecord } from '../../results/results.js';
import { browserTest as test } from '../browser-fixture.js';
import { chromiumAvailable, openOfflinePage, type HeadlessBrowser } from '../headless.js';
import { syntheticResultRecords } from '../synthetic.js';
import { startViewer, type RunningViewer } from './server.js';

const haveBrowser = chromiumAvailable();
let browser: HeadlessBrowser | undefined;
let viewer: RunningViewer | undefined;
test.beforeAll(async ({ openBrowserContext }) => {
  if (haveBrowser) browser = await openBrowserContext({ width: 1200, height: 800 });
});
afterAll(async () => {
  await viewer?.close();
  await browser?.close();
});

const lineOf = (record: ResultRecord) => `${JSON.stringify(record)}\n`;

describe.skipIf(!haveBrowser)('rubricate view: a live run', () => {
  test('is labelled live, and its page shows the items written as they come, until it ends', async ({ tempDir }) => {
    const root = realpathSync(tempDir);
    const index = join(root, 'runs.jsonl');
    const results = join(root, 'live.jsonl');
    const records = [...syntheticResultRecords({ items: 4, criteriaPerItem: 2, seed: 8, errorRate: 0 })];
    writeFileSync(results, lineOf(records[0]));
    const recording = startRunRecording(index, { results, command: 'grade', judges: ['scripted:mixed'] }, () => undefined)!;
    viewer = await startViewer({ runIndex: index, port: 0 });
    const origin = new URL(viewer.url).origin;

    const { page, errors } = await openOfflinePage(browser!, viewer.url, { allowOrigin: origin });
    await page.waitForSelector('[data-testid="run-status"]');
    expect(await page.textContent('[data-testid="run-status"]')).toBe('● live · made-up verdicts');
    expect(await page.isVisible('[data-testid="live-banner"]')).toBe(true);

    await page.goto(`${viewer.url}run?file=${encodeURIComponent(results)}`);
    await page.waitForSelector('[data-testid="item-count"]');
    expect(await page.textContent('[data-testid="item-count"]')).toBe('1');
    expect(await page.isVisible('[data-testid="live-banner"]')).toBe(true);

    // Two more items land: the page's next reload shows them.
    appendFileSync(results, lineOf(records[1]) + lineOf(records[2]));
    await page.locator('[data-testid="item-count"]', { hasText: /^3$/ }).waitFor();
    expect(await page.isVisible('[data-testid="live-banner"]')).toBe(true);

    // The run ends: the next page is no longer live, and stays as it is.
    appendFileSync(results, lineOf(records[3]));
    recording.end('finished', { items: { n: 4, ok: 4, error: 0, invalid: 0 } });
    await page.locator('[data-testid="item-count"]', { hasText: /^4$/ }).waitFor();
    expect(await page.$('[data-testid="live-banner"]')).toBeNull();
    expect(await page.$('meta[http-equiv="refresh"]')).toBeNull();
    expect(errors).toEqual([]);
  });
});
