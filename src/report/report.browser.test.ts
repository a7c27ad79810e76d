/**
 * The report as a person sees it: rendered in headless Chromium from a file:// URL, clicked
 * into, and read back. Needs Debian's `chromium` at /usr/bin/chromium (CI installs it).
 */
import { copyFileSync, existsSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { computeBinaryMeta } from '../meta/binary-metrics.js';
import { computePairwiseMeta } from '../scoring/pairwise-metrics.js';
import { Grader } from '../pipeline/grader.js';
import { toScoredItem, type GradedCriterion, type ResultRecord } from '../results/results.js';
import { getItemImporter } from '../formats/index.js';
import { aggregate, getScoring } from '../scoring/registry.js';
import { dataPath, haveData } from '../testing/data.js';
import { hashValue } from '../util/hash.js';
import { safeParseJson } from '../util/json.js';
import { readLines } from '../util/jsonl.js';
import { browserTest as test } from './browser-fixture.js';
import { chromiumAvailable, chromiumPath, openOfflinePage, type HeadlessBrowser } from './headless.js';
import { writeReportFromResults, type WriteReportOptions } from './index.js';
import { syntheticResultRecords } from './synthetic.js';

const haveBrowser = chromiumAvailable();
if (!haveBrowser) console.warn(`report browser tests skipped: ${chromiumPath} is absent (install it with: apt-get install -y chromium)`);
const healthbenchFile = dataPath('healthbench/oss_eval_first100.jsonl');
const haveHealthBench = haveBrowser && haveData(healthbenchFile, 'report screenshot (src/report/report.browser.test.ts)');
if (haveBrowser && !haveHealthBench) console.warn(`report screenshot test skipped: ${healthbenchFile} is absent`);

let directory: string;
let browser: HeadlessBrowser | undefined;

test.beforeAll(async ({ fileTempDir, openBrowserContext }) => {
  directory = fileTempDir;
  if (haveBrowser) browser = await openBrowserContext({ width: 1360, height: 900 });
});
afterAll(async () => {
  await browser?.close();
});

function writeResults(name: string, records: readonly ResultRecord[]): string {
  const file = join(directory, name);
  writeFileSync(file, records.map((record) => JSON.stringify(record)).join('\n') + '\n');
  return file;
}

/** Opens a report and waits for the page to say it is ready (or failed). */
async function openReport(options: Omit<WriteReportOptions, 'out'>, name: string): Promise<{ page: Page; errors: string[] }> {
  const out = join(directory, name);
  await writeReportFromResults({ ...options, out });
  const { page, errors } = await openOfflinePage(browser!, pathToFileURL(out).href);
  await page.waitForSelector('html[data-report-ready], html[data-report-error]');
  expect(await page.getAttribute('html', 'data-report-error')).toBeNull();
  return { page, errors };
}

/** The page's number formatting: fixed decimals with a typographic minus. */
function shown(value: number, digits = 3): string {
  const text = value.toFixed(digits);
  return text.startsWith('-') ? (Number(text) === 0 ? text.slice(1) : `−${text.slice(1)}`) : text;
}

function shownPoints(points: number): string {
  return `${points < 0 ? '−' : '+'}${Math.abs(points)}`;
}

function verdictKey(criterion: GradedCriterion): string {
  if (criterion.status === 'error') return 'error';
  if (criterion.status === 'skipped') return 'skipped';
  return criterion.met ? 'met' : 'not-met';
}

interface ShownCriterion {
  id: string;
  verdict: string;
  points: string;
  text: string;
  explanation: string | null;
  flipped: boolean;
}

async function shownCriteria(page: Page): Promise<ShownCriterion[]> {
  return page.$$eval('[data-testid="drawer"] [data-testid="criteria"] .criterion', (elements) =>
    elements.map((element) => ({
      id: element.dataset.criterionId ?? '',
      verdict: element.dataset.verdict ?? '',
      points: element.querySelector('[data-testid="points"]')?.textContent ?? '',
      text: element.querySelector('.criterion-text')?.textContent ?? '',
      explanation: element.querySelector('[data-testid="explanation"]')?.textContent ?? null,
      flipped: element.classList.contains('flipped'),
    })),
  );
}

async function openItem(page: Page, id: string): Promise<void> {
  await page.fill('#items input[type="search"]', id);
  await page.waitForSelector('html[data-filtered="1"]');
  await page.click(`.vrow[data-item-id="${id}"]`);
  await page.waitForSelector(`[data-testid="drawer"][data-item-id="${id}"] [data-testid="criteria"]`);
  // The texts (conversation, response, explanations) arrive once their chunk is decoded.
  await page.waitForSelector(`[data-testid="drawer"][data-item-id="${id}"] .message, [data-testid="drawer"][data-item-id="${id}"] .callout.info`);
}

const hostileResponse = 'Hello </div><script>window.__injected = 1</script><img src="x" onerror="window.__injected = 2"> bye </script><!--';

function hostileRecords(): ResultRecord[] {
  const records = [...syntheticResultRecords({ items: 40, criteriaPerItem: 5, seed: 77, errorRate: 0.1 })];
  const template = records[1];
  const criteria: GradedCriterion[] = template.criteria.map((criterion, index) => ({ ...criterion, id: `h${index}`, explanation: `Judge says </script><b onclick="x()">${index}</b>` }));
  criteria[1] = { ...criteria[1], met: !criteria[1].met };
  criteria[2] = { ...criteria[2], status: 'error', met: null, explanation: undefined, error: { code: 'JUDGE_TIMEOUT', message: 'no reply in time' } };
  criteria[3] = { ...criteria[3], status: 'skipped', met: null, explanation: undefined, skip_reason: 'hard rule failed' };
  const hostile: ResultRecord = {
    ...template,
    id: 'hostile-item',
    status: 'error',
    criteria,
    prompt: [{ role: 'user', content: 'Question with </div></div><script>window.__injected = 3</script>' }],
    response: hostileResponse,
  };
  hostile.score = null;
  records.push(hostile);
  return records;
}

describe.skipIf(!haveBrowser)('HTML report in headless Chromium', () => {
  for (const compression of ['never', 'always'] as const) {
    it(`shows the results file's verdicts and treats every text as data (${compression === 'never' ? 'plain JSON' : 'compressed'} payload)`, async () => {
      const records = hostileRecords();
      const input = writeResults(`hostile-${compression}.jsonl`, records);
      const { page, errors } = await openReport({ input, title: '<script>window.__injected = 4</script>Report', compression }, `hostile-${compression}.html`);
      const metrics = aggregate(getScoring('healthbench'), records.map(toScoredItem));

      expect(await page.title()).toBe('<script>window.__injected = 4</script>Report');
      expect(await page.textContent('[data-testid="score"]')).toBe(shown(metrics.overall!.score));
      expect(await page.textContent('[data-testid="item-count"]')).toBe(String(records.length));
      expect(await page.textContent('[data-testid="result-count"]')).toBe(`Showing ${records.length} of ${records.length} items`);

      await openItem(page, 'hostile-item');
      const hostile = records.at(-1)!;
      const criteria = await shownCriteria(page);
      expect(criteria.map(({ id, verdict, points, text }) => ({ id, verdict, points, text }))).toEqual(
        hostile.criteria.map((criterion) => ({ id: criterion.id, verdict: verdictKey(criterion), points: shownPoints(criterion.points), text: criterion.text })),
      );
      expect(criteria.map((criterion) => criterion.explanation)).toEqual(
        hostile.criteria.map((criterion) => (criterion.explanation ? `${criterion.source === 'check' ? 'Check' : 'Judge'}: ${criterion.explanation}` : null)),
      );
      expect(await page.textContent('[data-testid="response"]')).toBe(hostileResponse);
      expect(await page.textContent('[data-testid="drawer"] .message .text-body')).toBe(hostile.prompt![0].content);

      // Nothing from the data became markup or ran.
      expect(await page.evaluate(() => (globalThis as { __injected?: number }).__injected)).toBeUndefined();
      expect(await page.locator('img').count()).toBe(0);
      expect(await page.locator('b[onclick]').count()).toBe(0);
      expect(errors).toEqual([]);

      // Another item, chosen through the table rather than the search box.
      await page.click('[data-testid="drawer-close"]');
      await page.fill('#items input[type="search"]', '');
      await page.waitForSelector(`html[data-filtered="${records.length}"]`);
      await page.click('.vrow[data-item-id="item-00007"]');
      await page.waitForSelector('[data-testid="drawer"][data-item-id="item-00007"] [data-testid="criteria"]');
      const seventh = records[6];
      expect((await shownCriteria(page)).map((criterion) => criterion.verdict)).toEqual(seventh.criteria.map(verdictKey));
      expect(await page.textContent('[data-testid="drawer-score"]')).toBe(seventh.score === null ? '—' : shown(seventh.score));
      await page.close();
    });
  }

  it('sorts and filters the item table', async () => {
    const records = [...syntheticResultRecords({ items: 300, criteriaPerItem: 4, seed: 5, errorRate: 0.05 })];
    const { page } = await openReport({ input: writeResults('table.jsonl', records) }, 'table.html');
    await page.click('button[data-sort="score"]');
    const best = records.reduce((top, record) => ((record.score ?? -Infinity) > (top.score ?? -Infinity) ? record : top));
    expect(await page.getAttribute('#items .vrow >> nth=0', 'data-item-id')).toBe(best.id);
    expect(await page.getAttribute('button[data-sort="score"]', 'data-sorted')).toBe('desc');
    // Second click: lowest first, items without a score still last; third click: file order again.
    await page.click('button[data-sort="score"]');
    const worst = records.reduce((low, record) => (record.score !== null && (low.score === null || record.score < low.score) ? record : low));
    expect(await page.getAttribute('#items .vrow >> nth=0', 'data-item-id')).toBe(worst.id);
    expect(await page.getAttribute('button[data-sort="score"]', 'data-sorted')).toBe('asc');
    await page.click('button[data-sort="score"]');
    expect(await page.getAttribute('#items .vrow >> nth=0', 'data-item-id')).toBe(records[0].id);
    expect(await page.getAttribute('button[data-sort="score"]', 'data-sorted')).toBeNull();

    await page.click('#items .tabs button[data-value="error"]');
    const errorCount = records.filter((record) => record.status === 'error').length;
    expect(errorCount).toBeGreaterThan(3);
    await page.waitForSelector(`html[data-filtered="${errorCount}"]`);
    const ids = await page.$$eval('#items .vrow', (rows) => rows.map((row) => row.dataset.itemId));
    expect(new Set(ids)).toEqual(new Set(records.filter((record) => record.status === 'error').map((record) => record.id)));

    // Text search reaches responses once the texts are decoded.
    await page.click('#items .tabs button[data-value="all"]');
    await page.waitForSelector('html[data-texts-ready]');
    const needle = records[123].response!.split(' ').slice(2, 5).join(' ').toLowerCase();
    const searchable = (record: ResultRecord) => [record.id, ...(record.tags ?? []), record.rubric_id ?? '', record.response ?? '', ...(record.prompt ?? []).map((message) => message.content)].join('\n').toLowerCase();
    const expected = records.filter((record) => searchable(record).includes(needle)).length;
    await page.fill('#items input[type="search"]', needle);
    await page.waitForSelector(`html[data-filtered="${expected}"]`);
    expect(await page.locator(`.vrow[data-item-id="${records[123].id}"]`).count()).toBe(1);
    await page.close();
  });

  it('compares two runs: paired difference, per-item baseline verdicts and flips', async () => {
    const run = [...syntheticResultRecords({ items: 80, criteriaPerItem: 5, seed: 12, errorRate: 0 })];
    const baseline = [...syntheticResultRecords({ items: 80, criteriaPerItem: 5, seed: 12, errorRate: 0, qualityShift: -0.2 })];
    const { page, errors } = await openReport({ input: writeResults('run.jsonl', run), compare: writeResults('baseline.jsonl', baseline) }, 'compare.html');
    const scoring = getScoring('healthbench');
    const differences = run.map((record, index) => [scoring.itemScore(toScoredItem(record)), scoring.itemScore(toScoredItem(baseline[index]))]).filter(([a, b]) => a !== null && b !== null);
    const difference = differences.reduce((total, [a, b]) => total + (a! - b!), 0) / differences.length;
    expect(await page.textContent('[data-testid="delta"]')).toBe(`+${difference.toFixed(3)} vs baseline`);
    expect(await page.locator('[data-testid="paired-differences"] .forest-row:not(.head)').count()).toBe(1);

    const changed = run.findIndex((record, index) => record.criteria.some((criterion, position) => criterion.met !== baseline[index].criteria[position].met));
    await openItem(page, run[changed].id);
    const shownRows = await shownCriteria(page);
    expect(shownRows.map((row) => row.flipped)).toEqual(run[changed].criteria.map((criterion, position) => criterion.met !== baseline[changed].criteria[position].met));
    expect(errors).toEqual([]);
    await page.close();
  });

  it('renders empty and unreadable inputs without failing, and says why', async () => {
    const empty = join(directory, 'empty.jsonl');
    writeFileSync(empty, '');
    const first = await openReport({ input: empty }, 'empty.html');
    expect(await first.page.textContent('[data-testid="score"]')).toBe('—');
    expect(await first.page.textContent('[data-testid="result-count"]')).toBe('Showing 0 of 0 items');
    await first.page.close();

    // A file with no results line at all is not a results file: refused (INPUT_WRONG_TYPE), no page written.
    const notResults = join(directory, 'not-results.jsonl');
    writeFileSync(notResults, 'not json\n{"id": 3}\n');
    await expect(writeReportFromResults({ input: notResults, out: join(directory, 'not-results.html') })).rejects.toMatchObject({ code: 'INPUT_WRONG_TYPE' });
    expect(existsSync(join(directory, 'not-results.html'))).toBe(false);

    // Results with unreadable lines among them: the page renders what it can and says what it skipped.
    const [good] = syntheticResultRecords({ items: 1, criteriaPerItem: 2, seed: 3 });
    const unreadable = join(directory, 'unreadable.jsonl');
    writeFileSync(unreadable, `${JSON.stringify(good)}\nnot json\n{"id": 3}\n`);
    const second = await openReport({ input: unreadable }, 'unreadable.html');
    expect(await second.page.textContent('[data-testid="problems"] summary')).toBe('2 lines of unreadable.jsonl could not be read and were skipped');
    expect(await second.page.$$eval('[data-testid="problems"] li', (items) => items.map((item) => item.textContent))).toEqual([
      `${unreadable}:2: not valid JSON: Unexpected token 'o', "not json" is not valid JSON`,
      `${unreadable}:3 field status: not a results line: Invalid discriminator value. Expected 'ok' | 'error' | 'invalid'`,
    ]);
    expect([...first.errors, ...second.errors]).toEqual([]);
    await second.page.close();
  });

  it('renders meta-evaluation reports: confusion matrix, per-group figures, accuracy per order', async () => {
    const binary = computeBinaryMeta(
      Array.from({ length: 60 }, (_, index) => ({ prediction: index % 3 !== 0, label: index % 4 !== 0, groups: { criterion: `c${index % 4}`, source: index % 2 ? 'model-a' : 'model-b' } })),
      { resamples: 100 },
    );
    const binaryFile = join(directory, 'binary.json');
    writeFileSync(binaryFile, JSON.stringify(binary, null, 2));
    const { page, errors } = await openReport({ input: binaryFile }, 'binary.html');
    expect(await page.textContent('[data-testid="confusion-true-positive"] .count')).toBe(String(binary.overall.confusion.truePositive));
    expect(await page.textContent('[data-testid="confusion-false-negative"] .count')).toBe(String(binary.overall.confusion.falseNegative));
    expect(await page.textContent('[data-testid="accuracy"] .metric-value')).toBe(binary.overall.accuracy!.toFixed(3));
    expect(await page.locator('[data-testid="group-chart"] tbody tr').count()).toBe(Object.keys(binary.groups.criterion).length);
    await page.close();

    const pairwise = computePairwiseMeta(
      Array.from({ length: 50 }, (_, index) => ({ gold: index % 2 ? ('A' as const) : ('B' as const), original: index % 3 ? ('A' as const) : ('B' as const), swapped: index % 5 ? ('A' as const) : ('tie' as const), source: `set-${index % 3}` })),
      { resamples: 100 },
    );
    const pairwiseFile = join(directory, 'pairwise.json');
    writeFileSync(pairwiseFile, JSON.stringify(pairwise));
    const opened = await openReport({ input: pairwiseFile }, 'pairwise.html');
    expect(await opened.page.textContent('[data-testid="accuracy-original"] .metric-value')).toBe(pairwise.overall.accuracy.original!.toFixed(3));
    expect(await opened.page.textContent('[data-testid="positional-agreement"] .metric-value')).toBe(pairwise.overall.positionalAgreement!.toFixed(3));
    expect(await opened.page.locator('[data-testid="group-chart"] tbody tr').count()).toBe(3);
    expect([...errors, ...opened.errors]).toEqual([]);
    await opened.page.close();
  });

  it('shows the human ceiling beside the judge in a binary meta report', async () => {
    // Three named raters; HealthBench's weighted figure (17/30) differs from the pooled one (0.4).
    const binary = computeBinaryMeta(
      [
        { prediction: true, label: [true, true, false], raters: ['a', 'b', 'c'] },
        { prediction: false, label: [false, false], raters: ['a', 'b'] },
        { prediction: true, label: [true, false], raters: ['b', 'c'] },
      ],
      { resamples: 0 },
    );
    const file = join(directory, 'binary-raters.json');
    writeFileSync(file, JSON.stringify(binary));
    const { page, errors } = await openReport({ input: file }, 'binary-raters.html');
    const human = page.locator('.stat-row', { hasText: 'Human ceiling' });
    expect(await human.locator('dt').textContent()).toBe('Human ceiling: raters against one another (HealthBench physician baseline)');
    expect(await human.locator('dd').textContent()).toBe(`balanced F1 ${shown(17 / 30)} · κ ${shown(0.2)} · accuracy ${shown(0.4)} · 10 rater pairs`);
    expect(await human.locator('dd').getAttribute('title')).toBe('weighted average of raters over (rater, category) cells, as HealthBench publishes it; pooled over all pairs: balanced F1 0.400');
    // The judge's row follows, on the same labels: 7 (prediction, label) pairs.
    const judge = page.locator('.stat-row', { hasText: 'Judge against the same labels' });
    const overall = binary.overall;
    expect(await judge.locator('dd').textContent()).toBe(`balanced F1 ${shown(overall.balancedF1!)} · κ ${shown(overall.cohenKappa!)} · accuracy ${shown(overall.accuracy!)} · 7 pairs`);
    expect(await judge.locator('dd').getAttribute('title')).toBe(`weighted as the raters, one cell per category: balanced F1 ${shown(binary.humanBaseline!.judge.balancedF1!)} · κ ${shown(binary.humanBaseline!.judge.cohenKappa!)}`);
    expect(errors).toEqual([]);
    await page.close();
  });
});

const cannedSentences = [
  'Thanks for the details; here is what I would suggest.',
  'Most of the time this is not dangerous, but a few warning signs need urgent care.',
  'If you notice chest pain, trouble breathing or confusion, call emergency services right away.',
  'Keep drinking fluids, rest, and track your temperature twice a day.',
  'Over-the-counter pain relief can help; follow the dose on the label.',
  'It would help to know how long this has been going on and whether you take any medication.',
  'A doctor or nurse can examine you and order tests if needed.',
  'Please book an appointment within the next few days if it does not improve.',
];

/** A deterministic fraction in [0, 1) from text: the fake judge's "opinion". */
function fraction(text: string): number {
  return Number.parseInt(hashValue(text).slice(0, 8), 16) / 2 ** 32;
}

describe.skipIf(!haveBrowser || !haveHealthBench)('HealthBench report screenshot', () => {
  test('grades the first 100 HealthBench examples through the pipeline and captures the report', async ({ scriptedJudge }) => {
    // Synthetic responses: stock sentences picked per example.
    const responsesFile = join(directory, 'healthbench-responses.jsonl');
    const responseLines: string[] = [];
    for await (const { text } of readLines(healthbenchFile)) {
      const parsed = safeParseJson(text);
      if (!parsed.ok) continue;
      const promptId = String((parsed.value as { prompt_id: unknown }).prompt_id);
      const count = 2 + Math.floor(fraction(promptId) * 4);
      const sentences = Array.from({ length: count }, (_, index) => cannedSentences[Math.floor(fraction(`${promptId}:${index}`) * cannedSentences.length)]);
      responseLines.push(JSON.stringify({ prompt_id: promptId, response: sentences.join(' ') }));
    }
    writeFileSync(responsesFile, responseLines.join('\n') + '\n');

    const { judge } = await scriptedJudge((request) => {
      const verdicts: Record<string, unknown> = {};
      for (const criterion of request.criteria) {
        const chance = criterion.points < 0 ? 0.22 : 0.58;
        const met = fraction(`${criterion.text}\u0000${request.response}`) < chance;
        verdicts[criterion.id] = {
          explanation: met ? 'The response does this: it gives the advice the criterion asks for.' : 'The response does not do this; the point is missing from the answer.',
          criteria_met: met,
        };
      }
      return { content: { verdicts }, usage: { prompt_tokens: 900 + request.criteria.length * 60, completion_tokens: 40 * request.criteria.length, cached_tokens: 512 } };
    }, { model: 'gpt-4.1-mini' });
    const resultsFile = join(directory, 'healthbench-results.jsonl');
    const grader = new Grader({ judge, scoring: 'healthbench', plan: { criteriaPerCall: 'all' }, calls: { concurrency: 8, retryBaseDelayMs: 5 } });
    const lines: string[] = [];
    for await (const result of grader.gradeStream(getItemImporter('healthbench').read(healthbenchFile, { responses: responsesFile }))) {
      // The fake judge listens on a random port; a fixed endpoint keeps the screenshot identical from run to run.
      if (result.judge) result.judge = { ...result.judge, base_url: 'http://localhost:8000/v1' };
      lines.push(JSON.stringify(result));
    }
    writeFileSync(resultsFile, lines.join('\n') + '\n');
    expect(lines).toHaveLength(100);

    const { page, errors } = await openReport({ input: resultsFile, title: 'HealthBench · first 100 examples', generatedAt: '2025-06-01T12:00:00.000Z' }, 'healthbench.html');
    expect(await page.textContent('[data-testid="item-count"]')).toBe('100');
    await page.waitForSelector('html[data-texts-ready]');
    await page.setViewportSize({ width: 1360, height: 1180 });
    const screenshot = join(directory, 'report-screenshot.png');
    await page.screenshot({ path: screenshot });
    expect(errors).toEqual([]);
    const size = statSync(screenshot).size;
    expect(size).toBeGreaterThan(20_000);
    expect(size).toBeLessThan(400_000);
    // The tracked README image changes only when asked: RUBRICATE_UPDATE_SCREENSHOT=1.
    if (process.env.RUBRICATE_UPDATE_SCREENSHOT === '1') copyFileSync(screenshot, resolve(process.cwd(), 'docs/report-screenshot.png'));
    await page.close();
  });
});
