/**
 * Reviewing verdicts in the report, end to end in headless Chromium: a reviewer answers three
 * verdicts (one in blind mode, one against the judge, one with a note), the reviews survive a
 * reload, filter the items and the drawer, export as a labels file (the download captured), and
 * `rubricate meta --format results --labels` reads that file back with the agreement the
 * answers imply; `rubricate report --labels` then lays the same labels over the run.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect } from 'vitest';
import { runCliCaptured } from '../cli/in-process.js';
import type { BinaryMetaReport } from '../meta/binary-metrics.js';
import type { ResultRecord } from '../results/results.js';
import { browserTest as test } from './browser-fixture.js';
import { chromiumAvailable, chromiumPath, openOfflinePage, type HeadlessBrowser } from './headless.js';
import { writeReportFromResults } from './index.js';
import { syntheticResultRecords } from './synthetic.js';

const haveBrowser = chromiumAvailable();
if (!haveBrowser) console.warn(`review browser test skipped: ${chromiumPath} is absent (install it with: apt-get install -y chromium)`);

let browser: HeadlessBrowser | undefined;
let directory: string;

test.beforeAll(async ({ fileTempDir, openBrowserContext }) => {
  directory = fileTempDir;
  if (haveBrowser) browser = await openBrowserContext({ width: 1360, height: 900 });
});
afterAll(async () => {
  await browser?.close();
});

async function ready(page: Page): Promise<void> {
  await page.waitForSelector('html[data-report-ready], html[data-report-error]', { state: 'attached' });
  expect(await page.getAttribute('html', 'data-report-error')).toBeNull();
}

async function openItem(page: Page, id: string): Promise<void> {
  await page.fill('#items input[type="search"]', id);
  await page.waitForSelector('html[data-filtered="1"]');
  await page.click(`#items .vrow[data-item-id="${id}"]`);
  await page.waitForSelector(`[data-testid="drawer"][data-item-id="${id}"] .message`);
}

function card(id: string) {
  return `[data-testid="drawer"] [data-testid="criteria"] .criterion[data-criterion-id="${id}"]`;
}

async function answer(page: Page, criterion: string, value: 'met' | 'not_met' | 'cannot_assess'): Promise<void> {
  await page.click(`${card(criterion)} [data-testid="review"] button[data-answer="${value}"]`);
  await page.waitForSelector(`${card(criterion)} [data-testid="review"][data-review="${value}"]`);
}

async function exportLabels(page: Page, name: string): Promise<string> {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-labels"]')]);
  const file = join(directory, name);
  await download.saveAs(file);
  expect(download.suggestedFilename()).toBe('labels-run.jsonl');
  return readFileSync(file, 'utf8');
}

describe.skipIf(!haveBrowser)('reviewing verdicts in the report', () => {
  test('three reviews persist across a reload, filter the page, export as labels that meta reads back with the expected agreement, and --labels lays them over the run', async () => {
    const records: ResultRecord[] = [...syntheticResultRecords({ items: 12, criteriaPerItem: 5, seed: 41, errorRate: 0 })];
    const input = join(directory, 'run.jsonl');
    writeFileSync(input, records.map((record) => JSON.stringify(record)).join('\n') + '\n');
    const judged = (record: ResultRecord) => record.criteria.filter((criterion) => criterion.source === 'judge' && criterion.status === 'ok');
    const [first, second] = records.filter((record) => judged(record).length >= 2);
    const [agreed, disagreed] = judged(first);
    const [other] = judged(second);
    const out = join(directory, 'run.html');
    await writeReportFromResults({ input, out });
    const { page, errors } = await openOfflinePage(browser!, pathToFileURL(out).href);
    await ready(page);
    expect(await page.textContent('[data-testid="review-count"]')).toBe(`reviewed 0 of ${records.reduce((total, record) => total + record.criteria.length, 0)} verdicts`);

    // Blind: the judge's verdict and explanation stay hidden until the reviewer has answered.
    await page.fill('[data-testid="reviewer"]', 'ana');
    await page.press('[data-testid="reviewer"]', 'Enter');
    await page.check('[data-testid="blind"]');
    await openItem(page, first.id);
    await page.waitForSelector('[data-testid="drawer"] [data-testid="criteria"] .criterion');
    expect(await page.getAttribute(card(agreed.id), 'data-verdict')).toBe('hidden');
    expect(await page.locator(`${card(agreed.id)} [data-testid="explanation"]`).count()).toBe(0);
    expect(await page.textContent('[data-testid="drawer-score"]')).toBe('hidden');
    await answer(page, agreed.id, agreed.met ? 'met' : 'not_met');
    expect(await page.getAttribute(card(agreed.id), 'data-verdict')).toBe(agreed.met ? 'met' : 'not-met');
    expect(await page.textContent(`${card(agreed.id)} [data-testid="explanation"]`)).toBe(`Judge: ${agreed.explanation}`);
    expect(await page.textContent(`${card(agreed.id)} [data-testid="review-agreement"]`)).toBe('you agree');
    // Still hidden: the criterion not yet answered.
    expect(await page.getAttribute(card(disagreed.id), 'data-verdict')).toBe('hidden');
    await page.uncheck('[data-testid="drawer-blind"]');
    await page.waitForSelector(`${card(disagreed.id)}:not([data-verdict="hidden"])`);

    await answer(page, disagreed.id, disagreed.met ? 'not_met' : 'met');
    expect(await page.textContent(`${card(disagreed.id)} [data-testid="review-agreement"]`)).toBe('you disagree');
    await page.fill(`${card(disagreed.id)} [data-testid="review-note"]`, 'the response <b>does</b> say it');
    await page.press(`${card(disagreed.id)} [data-testid="review-note"]`, 'Enter');
    await page.click('[data-testid="drawer-close"]');
    await openItem(page, second.id);
    await answer(page, other.id, other.met ? 'met' : 'not_met');
    // A fourth answer, cannot assess, is exported as such; taken back, it leaves the three.
    const [, spare] = judged(second);
    await answer(page, spare.id, 'cannot_assess');
    expect(await page.textContent(`${card(spare.id)} [data-testid="review-agreement"]`)).toBe('cannot assess');
    await page.click('[data-testid="drawer-close"]');
    const withSpare = (await exportLabels(page, 'labels-with-spare.jsonl')).trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(withSpare.at(-1)).toMatchObject({ id: second.id, criterion_id: spare.id, label: 'cannot_assess', reviewer: 'ana' });
    await openItem(page, second.id);
    await page.click(`${card(spare.id)} [data-testid="review"] button[data-answer="cannot_assess"]`);
    await page.waitForSelector(`${card(spare.id)} [data-testid="review"][data-review=""]`);
    await page.click('[data-testid="drawer-close"]');

    // Kept by the browser: a reload finds the three reviews.
    await page.reload();
    await ready(page);
    expect(await page.textContent('[data-testid="review-count"]')).toContain('reviewed 3 of');
    expect(await page.textContent('[data-testid="review-count"]')).toContain('you disagree with 1');
    expect(await page.inputValue('[data-testid="reviewer"]')).toBe('ana');
    await page.selectOption('[data-testid="review-filter"]', 'disagree');
    await page.waitForSelector('html[data-filtered="1"]');
    expect(await page.getAttribute('#items .vrow', 'data-item-id')).toBe(first.id);
    await page.click(`#items .vrow[data-item-id="${first.id}"]`);
    await page.waitForSelector(`${card(disagreed.id)} [data-testid="review"][data-review="${disagreed.met ? 'not_met' : 'met'}"]`);
    expect(await page.inputValue(`${card(disagreed.id)} [data-testid="review-note"]`)).toBe('the response <b>does</b> say it');
    await page.click('[data-testid="criteria-filter"] button[data-value="disagree"]');
    expect(await page.$$eval('[data-testid="drawer"] [data-testid="criteria"] .criterion', (elements) => elements.map((element) => element.dataset.criterionId))).toEqual([disagreed.id]);
    await page.click('[data-testid="criteria-filter"] button[data-value="all"]');
    await page.click('[data-testid="drawer-close"]');

    const exported = await exportLabels(page, 'labels.jsonl');
    const lines = exported.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map(({ time: _time, ...rest }) => rest)).toEqual([
      { id: first.id, criterion_id: agreed.id, label: agreed.met, reviewer: 'ana' },
      { id: first.id, criterion_id: disagreed.id, label: !disagreed.met, reviewer: 'ana', note: 'the response <b>does</b> say it' },
      { id: second.id, criterion_id: other.id, label: other.met, reviewer: 'ana' },
    ]);
    for (const line of lines) expect(Number.isNaN(Date.parse(String(line.time)))).toBe(false);
    expect(errors).toEqual([]);
    await page.close();

    // meta reads the export: 3 labelled verdicts, the judge right on 2.
    const labelsFile = join(directory, 'labels.jsonl');
    const metaOut = join(directory, 'meta.json');
    const meta = await runCliCaptured(['meta', '--format', 'results', '--input', input, '--labels', labelsFile, '--out', metaOut]);
    expect(meta.code, meta.stderr).toBe(0);
    const report = JSON.parse(readFileSync(metaOut, 'utf8')) as BinaryMetaReport & { join: { joined: number; invalidLabelLines: number } };
    expect(report.join.joined).toBe(3);
    expect(report.join.invalidLabelLines).toBe(0);
    expect(report.overall.accuracy).toBeCloseTo(2 / 3, 12);
    const judgeMet = [agreed.met, disagreed.met, other.met];
    const humanMet = [agreed.met, !disagreed.met, other.met];
    const count = (judge: boolean, human: boolean) => judgeMet.filter((value, index) => value === judge && humanMet[index] === human).length;
    expect(report.overall.confusion).toMatchObject({ truePositive: count(true, true), falsePositive: count(true, false), falseNegative: count(false, true), trueNegative: count(false, false) });

    // The same labels over the run: meta's figures, and the one disagreement listed.
    const labelled = join(directory, 'labelled.html');
    const written = await runCliCaptured(['report', '--input', input, '--labels', labelsFile, '--out', labelled]);
    expect(written.code, written.stderr).toBe(0);
    const opened = await openOfflinePage(browser!, pathToFileURL(labelled).href);
    await ready(opened.page);
    expect(await opened.page.textContent('[data-testid="labels-accuracy"] .metric-value')).toBe(report.overall.accuracy!.toFixed(3));
    await opened.page.click('[data-testid="list-disagreements"]');
    await opened.page.waitForSelector('html[data-filtered="1"]');
    await opened.page.click(`#items .vrow[data-item-id="${first.id}"]`);
    await opened.page.waitForSelector(`${card(disagreed.id)} [data-testid="labels"]`);
    expect(await opened.page.textContent(`${card(disagreed.id)} [data-testid="labels"]`)).toBe(`Labels: met ×${disagreed.met ? 0 : 1}, not met ×${disagreed.met ? 1 : 0} · the majority disagrees with the judge`);
    expect(opened.errors).toEqual([]);
    await opened.page.close();
  });
});
