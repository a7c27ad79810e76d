/**
 * Blind review that is blind, in headless Chromium, read as the page's own text (innerText and
 * textContent of the body): with blind on, and after a reload, no unreviewed item's score, pass
 * bar, pass rate or judge explanation is anywhere in the page; reviewing every criterion of an
 * item reveals its score and its explanations, and nothing else. Reviews are saved as they are
 * made: the report file downloads its labels file on every change (when asked), and a run page of
 * `rubricate view` has the viewer write `NAME.labels.jsonl` beside the run; both read back as the
 * labels `meta --labels` and `report --labels` take.
 */
import { readFileSync, mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect } from 'vitest';
import { loadLabels } from '../meta/labels.js';
import { toScoredItem, type ResultRecord } from '../results/results.js';
import { getScoring } from '../scoring/registry.js';
import { browserTest as test } from './browser-fixture.js';
import { chromiumAvailable, chromiumPath, openOfflinePage, type HeadlessBrowser } from './headless.js';
import { writeReportFromResults } from './index.js';
import { syntheticResultRecords } from './synthetic.js';
import { startViewer, type RunningViewer } from './viewer/server.js';

const haveBrowser = chromiumAvailable();
if (!haveBrowser) console.warn(`blind review browser test skipped: ${chromiumPath} is absent (install it with: apt-get install -y chromium)`);

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

/** The page's text as a person can read it (innerText) and every text node outside the page's code (scripts, styles). */
async function pageText(page: Page): Promise<string> {
  const inner = await page.innerText('body');
  const nodes = (await page.evaluate(`(() => {
    const parts = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const tag = node.parentElement ? node.parentElement.tagName : '';
      if (tag !== 'SCRIPT' && tag !== 'STYLE') parts.push(node.textContent);
    }
    return parts.join('\\n');
  })()`)) as string;
  return `${inner}\n${nodes}`;
}

/** A score as the page writes it. */
function shown(value: number): string {
  const text = value.toFixed(3);
  return text.startsWith('-') ? (Number(text) === 0 ? text.slice(1) : `−${text.slice(1)}`) : text;
}

const scoring = getScoring('healthbench');

/** Six items whose scores all differ and none is 0 or 1, so each score is a string only its item puts in the page. */
function distinctRun(): ResultRecord[] {
  const kept: ResultRecord[] = [];
  const seen = new Set<string>();
  for (const record of syntheticResultRecords({ items: 60, criteriaPerItem: 4, seed: 61, errorRate: 0 })) {
    const score = scoring.itemScore(toScoredItem(record));
    if (score === null || score <= 0 || score >= 1 || seen.has(shown(score))) continue;
    seen.add(shown(score));
    kept.push(record);
    if (kept.length === 6) return kept;
  }
  throw new Error('the synthetic run has too few distinct scores');
}

function card(id: string): string {
  return `[data-testid="drawer"] [data-testid="criteria"] .criterion[data-criterion-id="${id}"]`;
}

async function openItem(page: Page, id: string): Promise<void> {
  await page.fill('#items input[type="search"]', id);
  await page.waitForSelector('html[data-filtered="1"]');
  await page.click(`#items .vrow[data-item-id="${id}"]`);
  await page.waitForSelector(`[data-testid="drawer"][data-item-id="${id}"] .message`);
}

async function answer(page: Page, criterion: string, value: 'met' | 'not_met'): Promise<void> {
  await page.click(`${card(criterion)} [data-testid="review"] button[data-answer="${value}"]`);
  await page.waitForSelector(`${card(criterion)} [data-testid="review"][data-review="${value}"]`);
}

/** What blind review must keep out of the page for these items: their scores and their judge's explanations. */
function secretsOf(records: readonly ResultRecord[]): string[] {
  return records.flatMap((record) => [shown(scoring.itemScore(toScoredItem(record))!), ...record.criteria.map((criterion) => criterion.explanation ?? '').filter((text) => text.length > 20)]);
}

/** Criterion ids in the order the run first has each criterion text (the criteria table's neutral order). */
function firstSeenCriteria(records: readonly ResultRecord[]): string[] {
  const seen = new Set<string>();
  const keys: string[] = [];
  for (const record of records) {
    for (const criterion of record.criteria) {
      const text = criterion.text ?? criterion.id;
      if (seen.has(text)) continue;
      seen.add(text);
      // The table's keys: a criterion's id, made unique among texts as the page makes them.
      let key = criterion.id;
      for (let suffix = 2; keys.includes(key); suffix += 1) key = `${criterion.id}~${suffix}`;
      keys.push(key);
    }
  }
  return keys;
}

/** With blind on: nothing of the `hidden` items in the page, and the criteria of the whole run (`all`) in a neutral order. */
async function expectBlind(page: Page, hidden: readonly ResultRecord[], all: readonly ResultRecord[] = hidden): Promise<void> {
  const text = await pageText(page);
  for (const secret of secretsOf(hidden)) expect(text, secret).not.toContain(secret);
  // The data the page was drawn from is read and gone: the whole body's textContent (its code
  // included) holds no judge explanation.
  expect(await page.locator('script[type="application/json"]').count()).toBe(0);
  const content = (await page.textContent('body')) ?? '';
  for (const record of hidden) for (const criterion of record.criteria) if (criterion.explanation && criterion.explanation.length > 20) expect(content).not.toContain(criterion.explanation);
  // No pass rate, no pass bar, no criteria-passed count of a hidden item.
  expect(text).not.toMatch(/\d+(\.\d+)?%/);
  expect(await page.locator('#criteria .score-cell').count()).toBe(0);
  // The criteria are listed as the run first has them, not by points lost (which would tell which fail).
  const criterionKeys = await page.$$eval('#criteria .vrow', (elements) => elements.map((element) => element.dataset.criterionKey ?? ''));
  expect(criterionKeys.length).toBeGreaterThan(0);
  expect(criterionKeys).toEqual(firstSeenCriteria(all).slice(0, criterionKeys.length));
  // Each hidden item's row, where the table draws it: no criteria-passed count.
  const rows = await page.$$eval('#items .vrow', (elements) => elements.map((element) => ({ id: element.dataset.itemId ?? '', text: element.textContent ?? '', bars: element.querySelectorAll('.met-cell, .score-bar').length })));
  const hiddenIds = new Set(hidden.map((record) => record.id));
  expect(rows.length).toBeGreaterThan(0);
  for (const row of rows) {
    if (!hiddenIds.has(row.id)) continue;
    expect(row.text).not.toMatch(/\d+\/\d+/);
    expect(row.bars).toBe(0);
  }
}

describe.skipIf(!haveBrowser)('blind review', () => {
  test('the report file: nothing unreviewed in the page with blind on and after a reload; a reviewed item shows; the labels file downloads on every change', async ({ tempDir }) => {
    const records = distinctRun();
    const input = join(tempDir, 'run.jsonl');
    writeFileSync(input, records.map((record) => JSON.stringify(record)).join('\n') + '\n');
    const out = join(tempDir, 'run.html');
    await writeReportFromResults({ input, out });
    const { page, errors } = await openOfflinePage(browser!, pathToFileURL(out).href);
    await ready(page);
    // Blind off: the scores are in the page (so their absence below means something).
    const open = await pageText(page);
    for (const record of records) expect(open).toContain(shown(scoring.itemScore(toScoredItem(record))!));
    expect(open).toMatch(/\d+\.\d%/);

    await page.check('[data-testid="blind"]');
    await page.waitForSelector('[data-testid="blind-overview"]');
    await expectBlind(page, records);
    await page.reload();
    await ready(page);
    expect(await page.isChecked('[data-testid="blind"]')).toBe(true);
    await expectBlind(page, records);

    // Reviewing every criterion of one item reveals its explanations, then its score; the others stay hidden.
    const [first, second] = records;
    await openItem(page, first.id);
    expect(await page.textContent('[data-testid="drawer-score"]')).toBe('hidden');
    await expectBlind(page, records);
    for (const criterion of first.criteria) {
      await answer(page, criterion.id, criterion.met ? 'met' : 'not_met');
    }
    await page.locator('[data-testid="drawer-score"]').filter({ hasNotText: 'hidden' }).waitFor();
    expect(await page.textContent('[data-testid="drawer-score"]')).toBe(shown(scoring.itemScore(toScoredItem(first))!));
    const drawerText = await page.innerText('[data-testid="drawer"]');
    for (const criterion of first.criteria) if (criterion.explanation) expect(drawerText).toContain(criterion.explanation);
    await page.click('[data-testid="drawer-close"]');
    await page.fill('#items input[type="search"]', '');
    await page.waitForSelector(`#items .vrow[data-item-id="${second.id}"]`);
    expect(await page.innerText(`#items .vrow[data-item-id="${first.id}"]`)).toContain(shown(scoring.itemScore(toScoredItem(first))!));
    await expectBlind(page, records.slice(1), records);

    // Download on every change: one more review, and the labels file comes down whole.
    await page.check('[data-testid="download-on-change"]');
    await openItem(page, second.id);
    const criterion = second.criteria[0];
    const [download] = await Promise.all([page.waitForEvent('download'), answer(page, criterion.id, criterion.met ? 'not_met' : 'met')]);
    const saved = join(tempDir, 'downloaded.jsonl');
    await download.saveAs(saved);
    expect(download.suggestedFilename()).toBe('labels-run.jsonl');
    const labels = await loadLabels(saved);
    expect(labels.invalid).toEqual([]);
    expect(labels.pairs).toBe(first.criteria.length + 1);
    expect(labels.byItem.get(second.id)?.get(criterion.id)).toEqual([!criterion.met]);
    expect(errors).toEqual([]);
    await page.close();
  });

  test('rubricate view: reviews are written beside the run as they are made, and blind holds there too', async ({ tempDir }) => {
    const records = distinctRun();
    const folder = join(tempDir, 'runs');
    mkdirSync(folder);
    writeFileSync(join(folder, 'run.jsonl'), records.map((record) => JSON.stringify(record)).join('\n') + '\n');
    viewer = await startViewer({ folder, port: 0 });
    const origin = new URL(viewer.url).origin;
    const { page, errors } = await openOfflinePage(browser!, `${origin}/run?file=run.jsonl`, { allowOrigin: origin });
    await ready(page);
    await page.check('[data-testid="blind"]');
    await page.waitForSelector('[data-testid="blind-overview"]');
    await expectBlind(page, records);
    const [first] = records;
    await openItem(page, first.id);
    for (const criterion of first.criteria.slice(0, 2)) await answer(page, criterion.id, criterion.met ? 'met' : 'not_met');
    await page.waitForSelector('[data-testid="labels-saved"][data-state="saved"]:text("2 reviews")');
    const file = join(folder, 'run.labels.jsonl');
    expect(existsSync(file)).toBe(true);
    const labels = await loadLabels(file);
    expect(labels.pairs).toBe(2);
    for (const criterion of first.criteria.slice(0, 2)) expect(labels.byItem.get(first.id)?.get(criterion.id)).toEqual([criterion.met]);
    // The run itself is untouched, and the labels file is not listed as a run.
    expect(readFileSync(join(folder, 'run.jsonl'), 'utf8')).toBe(records.map((record) => JSON.stringify(record)).join('\n') + '\n');
    expect(errors).toEqual([]);
    await page.close();
  });
});
