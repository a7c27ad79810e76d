/**
 * The compare view as a person sees it: pairs judged by the real Comparer (through the fake
 * judge), the report rendered in headless Chromium, clicked into and read back. Needs
 * Debian's `chromium` at /usr/bin/chromium.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { createOpenAICompatibleJudge } from '../judges/openai/openai-judge.js';
import { Comparer, CompareSummaryBuilder, type CompareRecord, type ComparisonResult } from '../pipeline/compare.js';
import type { PairwiseImportRecord } from '../rubric/records.js';
import { normalizeRubric } from '../rubric/normalize.js';
import type { PairwiseItem } from '../rubric/schema.js';
import { startFakeJudge } from '../testing/fake-judge.js';
import { browserTest as test } from './browser-fixture.js';
import { chromiumAvailable, chromiumPath, openOfflinePage, type HeadlessBrowser } from './headless.js';
import { writeReportFromResults } from './index.js';

const haveBrowser = chromiumAvailable();
if (!haveBrowser) console.warn(`compare view browser tests skipped: ${chromiumPath} is absent (install it with: apt-get install -y chromium)`);

let browser: HeadlessBrowser | undefined;
const records: CompareRecord[] = [];
let reportFile = '';

const hostileResponse = 'Seven </div><script>window.__injected = 1</script><img src="x" onerror="window.__injected = 2"> is correct </script><!--';
const rubric = normalizeRubric({ criteria: [{ id: 'correct', text: 'Gives the right answer', points: 5 }, { id: 'concise', text: 'Is concise', points: 2 }] });

/** 24 pairs: the correct response is A or B in turn; some carry a rubric; every pair has a label and a source. */
function pairs(): PairwiseItem[] {
  return Array.from({ length: 24 }, (_, index) => {
    const number = index + 1;
    const right = `Answer ${number}: this one is correct.`;
    const wrong = `Answer ${number}: this one is wrong.`;
    const aIsRight = number % 3 !== 0;
    return {
      id: `pair-${String(number).padStart(2, '0')}`,
      prompt: [{ role: 'user', content: `Question ${number}: what is the answer?` }],
      responseA: number === 3 ? hostileResponse : aIsRight ? right : wrong,
      responseB: number === 3 ? wrong : aIsRight ? wrong : right,
      label: aIsRight || number === 3 ? 'A' : 'B',
      source: number % 2 ? 'natural' : 'adversarial',
      ...(number % 4 === 0 ? { rubric } : {}),
    };
  });
}

const block = (text: string, name: string) => new RegExp(`<${name}-([0-9a-f]{16})>\\n([\\s\\S]*?)\\n</${name}-\\1>`).exec(text)?.[2] ?? '';

// The report under test is built once, from one comparison run, for all of this file's tests: the
// judge runs in this hook (where per-test fixtures are not available) and is closed in it.
test.beforeAll(async ({ fileTempDir: directory, openBrowserContext }) => {
  if (!haveBrowser) return;
  browser = await openBrowserContext({ width: 1360, height: 900 });
  const fake = await startFakeJudge((request) => {
    const first = block(request.userText, 'response-1');
    const second = block(request.userText, 'response-2');
    const conversation = block(request.userText, 'conversation');
    const criterion = block(request.userText, 'criterion');
    // Pair 7's swapped order gets an unusable reply; pairs 5 and 10 are judged by position only.
    if (conversation.includes('Question 7:') && second.includes('Answer 7: this one is correct')) return { content: { explanation: 'both are fine', winner: 'both' } };
    if (/Question (5|10):/.test(conversation)) return { content: { explanation: 'Response 1 comes first, so it wins.', winner: '1' } };
    if (criterion === 'Is concise') return { content: { explanation: 'Both are equally short.', winner: 'tie' } };
    const winner = first.includes('correct') && !second.includes('correct') ? '1' : '2';
    return { content: { explanation: `Response ${winner} is right. </script><b onclick="window.__injected = 3">bold</b>`, winner } };
  });
  const judge = createOpenAICompatibleJudge({ model: 'gpt-4.1-mini', baseUrl: fake.baseUrl });
  try {
    const comparer = new Comparer({ judge, calls: { maxAttempts: 1, retryBaseDelayMs: 1, concurrency: 4 } });
    async function* input(): AsyncGenerator<PairwiseImportRecord> {
      let line = 0;
      for (const pair of pairs()) yield { kind: 'pair', pair, line: ++line };
    }
    for await (const record of comparer.compareStream(input())) records.push(record);
  } finally {
    await judge.close();
    await fake.close();
  }
  const compareFile = join(directory, 'compare.jsonl');
  writeFileSync(compareFile, records.map((record) => JSON.stringify(record)).join('\n') + '\n');
  // The summary beside it, as `rubricate compare` writes it.
  const builder = new CompareSummaryBuilder();
  for (const record of records) builder.add(record);
  writeFileSync(`${compareFile}.summary.json`, JSON.stringify(builder.finish(), null, 2));
  reportFile = join(directory, 'compare.html');
  await writeReportFromResults({ input: compareFile, out: reportFile, title: 'Compare <b>run</b>' });
});

afterAll(async () => {
  await browser?.close();
});

async function openReport(hash = ''): Promise<{ page: Page; errors: string[] }> {
  const { page, errors } = await openOfflinePage(browser!, pathToFileURL(reportFile).href + hash);
  await page.waitForSelector('html[data-report-ready], html[data-report-error]');
  expect(await page.getAttribute('html', 'data-report-error')).toBeNull();
  return { page, errors };
}

function percent(value: number): string {
  return `${(value * 100).toFixed(1)}%`;
}

function verdictKey(verdict: string | null | undefined): string {
  return verdict === undefined ? 'absent' : verdict === null ? 'none' : verdict;
}

interface ShownComparison {
  id: string;
  winner: string;
  text: string;
  orders: Array<{ order: string; verdict: string; explanation: string | null }>;
}

async function shownComparisons(page: Page): Promise<ShownComparison[]> {
  return page.$$eval('[data-testid="pair-drawer"] [data-testid="comparison"]', (elements) =>
    elements.map((element) => ({
      id: element.dataset.comparisonId ?? '',
      winner: element.querySelector('[data-testid="comparison-verdict"]')?.getAttribute('data-verdict') ?? '',
      text: element.querySelector('[data-testid="comparison-text"]')?.textContent ?? '',
      orders: [...element.querySelectorAll('.order-row')].map((row) => ({
        order: row.dataset.order ?? '',
        verdict: row.querySelector('[data-testid="order-verdict"]')?.getAttribute('data-verdict') ?? '',
        explanation: row.querySelector('[data-testid="order-explanation"]')?.textContent ?? null,
      })),
    })),
  );
}

function expectedComparisons(record: CompareRecord): ShownComparison[] {
  const all: ComparisonResult[] = [...(record.overall ? [record.overall] : []), ...record.criteria];
  return all.map((comparison) => ({
    id: comparison.id,
    winner: verdictKey(comparison.winner),
    text: comparison.text,
    orders: (['ab', 'ba'] as const)
      .filter((order) => order in comparison.orders)
      .map((order) => ({ order, verdict: verdictKey(comparison.orders[order]), explanation: comparison.explanations?.[order] ?? null })),
  }));
}

async function openPair(page: Page, id: string): Promise<void> {
  await page.fill('input[type="search"]', id);
  await page.waitForSelector('html[data-filtered="1"]');
  await page.click(`.vrow[data-pair-id="${id}"]`);
  await page.waitForSelector(`[data-testid="pair-drawer"][data-pair-id="${id}"][data-texts="loaded"]`);
}

describe.skipIf(!haveBrowser)('compare view in headless Chromium', () => {
  it('shows the headline figures the records give', async () => {
    expect(records).toHaveLength(24);
    const { page, errors } = await openReport();
    const decided = records.filter((record) => record.status === 'ok' && record.winner !== null);
    const winRate = decided.reduce((total, record) => total + (record.winner === 'A' ? 1 : record.winner === 'B' ? 0 : 0.5), 0) / decided.length;
    expect(await page.title()).toBe('Compare <b>run</b>');
    expect(await page.textContent('[data-testid="win-rate"]')).toBe(percent(winRate));
    expect(await page.textContent('[data-testid="pair-count"]')).toBe('24');
    const count = (winner: string) => String(decided.filter((record) => record.winner === winner).length);
    expect(await page.textContent('[data-testid="count-win"]')).toBe(count('A'));
    expect(await page.textContent('[data-testid="count-loss"]')).toBe(count('B'));
    expect(await page.textContent('[data-testid="count-inconsistent"]')).toBe(count('inconsistent'));
    expect(Number(count('inconsistent'))).toBe(2);
    expect(await page.textContent('[data-testid="count-error"]')).toBe(String(records.filter((record) => record.status === 'error').length));
    const bothOrders = decided.filter((record) => record.consistent !== null);
    expect(await page.textContent('[data-testid="consistency-value"]')).toBe(percent(bothOrders.filter((record) => record.consistent).length / bothOrders.length));

    // Gold labels: each order scored on its own, a missing verdict never right.
    const labelled = records.filter((record) => record.label);
    const accuracy = labelled.filter((record) => record.orders.ab === record.label).length / labelled.length;
    expect(await page.textContent('[data-testid="accuracy-original"] .metric-value')).toBe(accuracy.toFixed(3));
    expect(await page.locator('[data-testid="sources-table"] tbody tr').count()).toBe(2);
    expect(await page.locator('[data-testid="criteria-table"] tbody tr').count()).toBe(2);
    // The summary file beside the records agrees with them, so there is nothing to warn about.
    expect(await page.locator('[data-testid="problems"]').count()).toBe(0);

    await page.click('.tabs button[data-value="inconsistent"]');
    await page.waitForSelector('html[data-filtered="2"]');
    expect(await page.$$eval('.vrow', (rows) => rows.map((row) => row.dataset.pairId).sort())).toEqual(['pair-05', 'pair-10']);
    // Pairs sort by id A→Z, then Z→A.
    await page.click('button[data-sort="id"]');
    await page.click('button[data-sort="id"]');
    expect(await page.$$eval('.vrow', (rows) => rows.map((row) => row.dataset.pairId))).toEqual(['pair-10', 'pair-05']);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('opens a pair: both responses as text, and each order’s verdict and explanation as in the file', async () => {
    const { page, errors } = await openReport();
    const hostile = records.find((record) => record.id === 'pair-03')!;
    await openPair(page, 'pair-03');
    expect(await page.textContent('[data-testid="response-a"]')).toBe(hostileResponse);
    expect(await page.textContent('[data-testid="response-b"]')).toBe(hostile.response_b!);
    expect(await page.textContent('[data-testid="pair-drawer"] .message .text-body')).toBe(hostile.prompt![0].content);
    expect(await page.getAttribute('[data-testid="drawer-winner"]', 'data-verdict')).toBe(hostile.winner);
    expect(await shownComparisons(page)).toEqual(expectedComparisons(hostile));
    expect(hostile.overall!.explanations!.ab).toContain('</script><b onclick');

    // A pair with a rubric: overall first, then each criterion.
    await page.click('[data-testid="drawer-close"]');
    await openPair(page, 'pair-04');
    const withRubric = records.find((record) => record.id === 'pair-04')!;
    expect(withRubric.criteria.map((comparison) => comparison.id)).toEqual(['correct', 'concise']);
    expect(await shownComparisons(page)).toEqual(expectedComparisons(withRubric));

    // A position-biased pair: the orders disagree, and each shows its own verdict.
    await page.click('[data-testid="drawer-close"]');
    await openPair(page, 'pair-05');
    const biased = records.find((record) => record.id === 'pair-05')!;
    expect(biased.orders).toEqual({ ab: 'A', ba: 'B' });
    expect(await page.getAttribute('[data-testid="drawer-winner"]', 'data-verdict')).toBe('inconsistent');
    expect(await shownComparisons(page)).toEqual(expectedComparisons(biased));

    // Nothing from the data became markup or ran.
    expect(await page.evaluate(() => (globalThis as { __injected?: number }).__injected)).toBeUndefined();
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.locator('b[onclick]').count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows a failed order as no verdict with its error, and opens a pair from the URL', async () => {
    const { page, errors } = await openReport('#pair=pair-07');
    await page.waitForSelector('[data-testid="pair-drawer"][data-pair-id="pair-07"][data-texts="loaded"]');
    const failed = records.find((record) => record.id === 'pair-07')!;
    expect(failed).toMatchObject({ status: 'error', winner: null, orders: { ba: null } });
    const shown = await shownComparisons(page);
    expect(shown).toEqual(expectedComparisons(failed));
    expect(shown[0].orders[1].verdict).toBe('none');
    expect(await page.textContent('[data-testid="pair-drawer"] .pair-comparison .callout.error')).toBe(`${failed.overall!.error!.code}: ${failed.overall!.error!.message}`);
    expect(errors).toEqual([]);
    await page.close();
  });
});
