/**
 * HTML report at scale: a synthetic 10,000-item × 10-criterion results file (with prompts,
 * responses and an explanation per verdict) rendered to a report, then opened in headless
 * Chromium. Measures the file size, the time to write it, first paint and time until the
 * overview is drawn, and a search, a sort and opening an item in the 10,000-row table.
 * Targets: report < 15 MB, overview drawn < 2 s on 2 cores. Run: `npx tsx bench/report.ts`.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { chromiumAvailable, chromiumPath, launchHeadlessChromium } from '../src/report/headless.js';
import { writeReportFromResults } from '../src/report/index.js';
import { writeSyntheticResults } from '../src/report/synthetic.js';
import { measureSelf, resetPeakRss } from './support/measure.js';

export interface ReportBenchmarkOptions {
  items?: number;
  criteriaPerItem?: number;
  /** Page loads measured (the median is reported). */
  rounds?: number;
}

export interface PageTimings {
  /** Browser's first-contentful-paint (the page shell), ms from navigation start. */
  firstContentfulPaintMs: number;
  /** Overview, charts and table drawn (the page's `rubricate-ready` mark). */
  readyMs: number;
  /** Every text chunk decoded (conversations, responses, explanations searchable). */
  textsReadyMs: number;
  /** Typing a word found in responses until the table shows the matches (includes the 120 ms typing pause). */
  searchMs: number;
  /** Clicking the score column header until the table is re-sorted. */
  sortMs: number;
  /** Clicking an item until its conversation and verdicts are shown. */
  openItemMs: number;
}

export interface ReportBenchmarkResult {
  items: number;
  criteriaPerItem: number;
  resultsMegabytes: number;
  reportMegabytes: number;
  /** Reading the results and writing the report (wall clock). */
  writeSeconds: number;
  writePeakRssMb: number;
  /** Median over rounds; null without Chromium. */
  page: PageTimings | null;
  rounds: PageTimings[];
  targets: { sizeUnder15Mb: boolean; readyUnder2s: boolean | null };
}

const megabyte = 1024 * 1024;

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Runs `action` in the page and resolves with the ms until the table re-renders (its data-filtered attribute is set). */
function timeTableUpdate(page: Page, action: 'search' | 'sort', query = ''): Promise<number> {
  // Page-only globals are reached through the root element: Node code is compiled without the DOM lib.
  return page.locator('html').evaluate(
    (root, [kind, text]) =>
      new Promise<number>((resolve) => {
        const view = root.ownerDocument.defaultView;
        const start = performance.now();
        const observer = new view.MutationObserver(() => {
          observer.disconnect();
          // Count the frame that shows the new rows.
          view.requestAnimationFrame(() => resolve(performance.now() - start));
        });
        observer.observe(root, { attributes: true, attributeFilter: ['data-filtered'] });
        if (kind === 'search') {
          const input = root.querySelector('#items input[type="search"]');
          input.value = text;
          input.dispatchEvent(new Event('input', { bubbles: true }));
        } else {
          root.querySelector('button[data-sort="score"]').click();
        }
      }),
    [action, query] as const,
  );
}

async function measurePage(page: Page, url: string): Promise<PageTimings> {
  await page.goto(url, { waitUntil: 'commit' });
  await page.waitForSelector('html[data-report-ready], html[data-report-error]', { timeout: 120_000 });
  const failure = await page.getAttribute('html', 'data-report-error');
  if (failure) throw new Error(`report failed to render: ${failure}`);
  await page.waitForSelector('html[data-texts-ready]', { timeout: 120_000 });
  const marks = await page.evaluate(() => ({
    firstContentfulPaintMs: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? Number.NaN,
    readyMs: performance.getEntriesByName('rubricate-ready')[0]?.startTime ?? Number.NaN,
    textsReadyMs: performance.now(),
  }));
  // A word of the synthetic vocabulary: matches a realistic share of the items.
  const word = 'hydration';
  const searchMs = await timeTableUpdate(page, 'search', word);
  await timeTableUpdate(page, 'search', '');
  const sortMs = await timeTableUpdate(page, 'sort');
  const openItemMs = await page.locator('html').evaluate(
    (root) =>
      new Promise<number>((resolve) => {
        const view = root.ownerDocument.defaultView;
        const start = performance.now();
        // No named functions in here: tsx would wrap them in a helper the page does not have.
        const observer = new view.MutationObserver(() => {
          if (!root.querySelector('[data-testid="drawer"] [data-testid="response"]') || !root.querySelector('[data-testid="drawer"] .criterion')) return;
          observer.disconnect();
          view.requestAnimationFrame(() => resolve(performance.now() - start));
        });
        observer.observe(root.ownerDocument.body, { childList: true, subtree: true });
        root.querySelectorAll('#items .vrow')[3].click();
      }),
  );
  return { ...marks, searchMs, sortMs, openItemMs };
}

export async function runReportBenchmark(options: ReportBenchmarkOptions = {}): Promise<ReportBenchmarkResult> {
  const items = options.items ?? 10_000;
  const criteriaPerItem = options.criteriaPerItem ?? 10;
  const directory = mkdtempSync(join(tmpdir(), 'rubricate-report-bench-'));
  try {
    const resultsFile = join(directory, 'results.jsonl');
    const reportFile = join(directory, 'report.html');
    await writeSyntheticResults(resultsFile, { items, criteriaPerItem, seed: 2025 });

    resetPeakRss();
    const started = performance.now();
    const written = await writeReportFromResults({ input: resultsFile, out: reportFile, title: `Synthetic run · ${items.toLocaleString('en-US')} items` });
    const writeSeconds = (performance.now() - started) / 1000;
    const writePeakRssMb = measureSelf().peakRssMb;

    const rounds: PageTimings[] = [];
    if (chromiumAvailable()) {
      const browser = await launchHeadlessChromium({ width: 1360, height: 900 });
      try {
        for (let round = 0; round < (options.rounds ?? 3); round += 1) {
          const page = await browser.context.newPage();
          rounds.push(await measurePage(page, pathToFileURL(reportFile).href));
          await page.close();
        }
      } finally {
        await browser.close();
      }
    }
    const page: PageTimings | null =
      rounds.length === 0
        ? null
        : {
            firstContentfulPaintMs: median(rounds.map((round) => round.firstContentfulPaintMs)),
            readyMs: median(rounds.map((round) => round.readyMs)),
            textsReadyMs: median(rounds.map((round) => round.textsReadyMs)),
            searchMs: median(rounds.map((round) => round.searchMs)),
            sortMs: median(rounds.map((round) => round.sortMs)),
            openItemMs: median(rounds.map((round) => round.openItemMs)),
          };
    return {
      items,
      criteriaPerItem,
      resultsMegabytes: statSync(resultsFile).size / megabyte,
      reportMegabytes: written.bytes / megabyte,
      writeSeconds,
      writePeakRssMb,
      page,
      rounds,
      targets: { sizeUnder15Mb: written.bytes < 15 * megabyte, readyUnder2s: page ? page.readyMs < 2000 : null },
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

function printResult(result: ReportBenchmarkResult): void {
  const number = (value: number, digits = 0) => value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  console.log(`HTML report — ${number(result.items)} items × ${result.criteriaPerItem} criteria (results file ${number(result.resultsMegabytes, 1)} MB)`);
  console.log(`  report size        ${number(result.reportMegabytes, 2)} MB   (target < 15 MB: ${result.targets.sizeUnder15Mb ? 'met' : 'MISSED'})`);
  console.log(`  write              ${number(result.writeSeconds, 2)} s, peak RSS ${number(result.writePeakRssMb)} MB`);
  if (!result.page) {
    console.log(`  page timings       skipped: ${chromiumPath} is absent (apt-get install -y chromium)`);
    return;
  }
  const page = result.page;
  console.log(`  first paint        ${number(page.firstContentfulPaintMs)} ms (page shell)`);
  console.log(`  overview drawn     ${number(page.readyMs)} ms   (target < 2000 ms: ${result.targets.readyUnder2s ? 'met' : 'MISSED'})`);
  console.log(`  all texts decoded  ${number(page.textsReadyMs)} ms`);
  console.log(`  search responses   ${number(page.searchMs)} ms (incl. 120 ms typing pause)`);
  console.log(`  sort by score      ${number(page.sortMs)} ms`);
  console.log(`  open an item       ${number(page.openItemMs)} ms`);
  console.log(`  (median of ${result.rounds.length} page loads)`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  printResult(await runReportBenchmark());
}
