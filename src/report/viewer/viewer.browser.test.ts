/**
 * `rubricate view` as a person uses it, in headless Chromium against the loopback server: the
 * index of a folder of three runs (and a probe report, and files that are not runs), a three-way
 * comparison, the item × run grid with its filters and export, an item's verdicts run by run and
 * the link into a run's own report, and the probe view. Figures are checked against the files.
 * With RUBRICATE_UPDATE_SCREENSHOT=1 it also writes the screenshots in docs/ (index, comparison,
 * grid, one item across runs).
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect } from 'vitest';
import { runCliCaptured } from '../../cli/in-process.js';
import type { ProbeReport } from '../../meta/probes/runner.js';
import { toScoredItem, type ResultRecord } from '../../results/results.js';
import { aggregate, getScoring } from '../../scoring/registry.js';
import { mean } from '../../statistics/descriptive.js';
import { browserTest as test } from '../browser-fixture.js';
import { criterionFailed } from '../collect.js';
import { chromiumAvailable, chromiumPath, openOfflinePage, type HeadlessBrowser } from '../headless.js';
import { syntheticResultRecords } from '../synthetic.js';
import { startViewer, type RunningViewer } from './server.js';

const haveBrowser = chromiumAvailable();
if (!haveBrowser) console.warn(`viewer browser test skipped: ${chromiumPath} is absent (install it with: apt-get install -y chromium)`);

let browser: HeadlessBrowser | undefined;
let viewer: RunningViewer | undefined;
test.beforeAll(async ({ openBrowserContext }) => {
  if (haveBrowser) browser = await openBrowserContext({ width: 1360, height: 900 });
});
afterAll(async () => {
  await viewer?.close();
  await browser?.close();
});

/** The page's number formatting. */
function shown(value: number, digits = 3): string {
  const text = value.toFixed(digits);
  return text.startsWith('-') ? (Number(text) === 0 ? text.slice(1) : `−${text.slice(1)}`) : text;
}
function shownSigned(value: number, digits = 3): string {
  const text = Math.abs(value).toFixed(digits);
  return Number(text) === 0 ? text : `${value > 0 ? '+' : '−'}${text}`;
}

async function ready(page: Page): Promise<void> {
  await page.waitForSelector('html[data-report-ready], html[data-report-error]', { state: 'attached' });
  expect(await page.getAttribute('html', 'data-report-error')).toBeNull();
}

function verdictKey(criterion: ResultRecord['criteria'][number]): string {
  if (criterion.status === 'error') return 'error';
  if (criterion.status === 'skipped') return 'skipped';
  return criterion.met ? 'met' : 'not-met';
}

async function screenshot(page: Page, directory: string, name: string): Promise<void> {
  const file = join(directory, name);
  await page.screenshot({ path: file });
  // The tracked images change only when asked.
  if (process.env.RUBRICATE_UPDATE_SCREENSHOT === '1') copyFileSync(file, resolve(process.cwd(), 'docs', name));
}

describe.skipIf(!haveBrowser)('rubricate view over three runs', () => {
  test('index, a three-way comparison, the item × run grid with filters and export, drill-down into a run, and the probe view', async ({ tempDir, startJudge }) => {
    const folder = join(tempDir, 'runs');
    mkdirSync(join(folder, 'nested'), { recursive: true });
    const baseline = [...syntheticResultRecords({ items: 30, criteriaPerItem: 5, seed: 21, errorRate: 0 })];
    const candidate = [...syntheticResultRecords({ items: 30, criteriaPerItem: 5, seed: 21, qualityShift: 0.2, errorRate: 0.1 })];
    // The third run lacks the first item and has two of its own.
    const third = [...syntheticResultRecords({ items: 32, criteriaPerItem: 5, seed: 21, qualityShift: -0.15, errorRate: 0 })].slice(1);
    third[third.length - 1] = { ...third[third.length - 1], id: 'only-in-third' };
    const runs: Record<string, ResultRecord[]> = { 'baseline.jsonl': baseline, 'candidate.jsonl': candidate, 'nested/third.jsonl': third };
    for (const [file, records] of Object.entries(runs)) writeFileSync(join(folder, file), records.map((record) => JSON.stringify(record)).join('\n') + '\n');
    writeFileSync(join(folder, 'metrics.json'), JSON.stringify({ n: 30 }, null, 2));
    writeFileSync(join(folder, 'labels.jsonl'), `${JSON.stringify({ id: 'item-00001', criterion_id: 'c0', label: true })}\n`);

    // A probe report, from the real command: a judge that credits length (so padding is a weakness).
    const items = join(tempDir, 'items.jsonl');
    writeFileSync(items, Array.from({ length: 6 }, (_, index) => JSON.stringify({ id: `p${index}`, prompt: `Question ${index}?`, response: `Rest. Drink fluids. See a doctor if it lasts ${index} days.`, rubric: { criteria: [{ id: 'rest', text: 'Advises rest', points: 2 }, { id: 'doctor', text: 'Says when to see a doctor', points: 1 }] } })).join('\n') + '\n');
    const fake = await startJudge((request) => ({ content: { explanation: 'ok', criteria_met: (request.response ?? '').length > 120 || request.criteria[0].id === 'rest' } }));
    const probed = await runCliCaptured(['probe', '--format', 'items', '--input', items, '--out', join(folder, 'probe.json'), '--probes', 'padding,formatting', '--bootstrap-resamples', '200', '--judge', 'openai:m', '--judge-base-url', fake.baseUrl, '--judge-api-key', 'k', '--no-cache', '--quiet']);
    expect([0, 3], probed.stderr).toContain(probed.code);
    const probeReport = JSON.parse(readFileSync(join(folder, 'probe.json'), 'utf8')) as ProbeReport;

    viewer = await startViewer({ folder, port: 0 });
    const origin = new URL(viewer.url).origin;
    const { page, errors } = await openOfflinePage(browser!, viewer.url, { allowOrigin: origin });
    await ready(page);

    // The index: the three runs with their headline scores; the probe report among the others; labels.jsonl said unreadable.
    const scoring = getScoring('healthbench');
    const scoreOf = (records: ResultRecord[]) => aggregate(scoring, records.map(toScoredItem)).overall!.score;
    const rows = await page.$$eval('#runs .vrow', (elements) => elements.map((element) => [element.dataset.file ?? '', element.children[3].querySelector('b')?.textContent ?? '']));
    expect(rows).toEqual(Object.entries(runs).map(([file, records]) => [file, shown(scoreOf(records))]));
    expect(await page.$$eval('[data-testid="other-reports"] a', (links) => links.map((link) => link.textContent))).toEqual(['probe.json']);
    expect(await page.textContent('[data-testid="skipped-files"] summary')).toBe('1 file could not be read as runs');
    await screenshot(page, tempDir, 'viewer-index.png');

    // Three runs ticked, the baseline first: the comparison.
    for (const file of Object.keys(runs)) await page.check(`#runs .vrow[data-file="${file}"] [data-testid="pick"]`);
    await Promise.all([page.waitForURL(/\/compare\?/), page.click('[data-testid="compare-selected"]')]);
    await ready(page);
    expect(await page.$$eval('[data-testid="runs-table"] [data-testid="run-score"]', (cells) => cells.map((cell) => cell.textContent))).toEqual(Object.values(runs).map((records) => shown(scoreOf(records))));
    // Paired difference candidate − baseline over items both scored, and its mirror image.
    const byId = (records: ResultRecord[]) => new Map(records.map((record) => [record.id, record]));
    const paired = (run: ResultRecord[], other: ResultRecord[]) => {
      const others = byId(other);
      const differences: number[] = [];
      for (const record of run) {
        const match = others.get(record.id);
        const score = scoring.itemScore(toScoredItem(record));
        const otherScore = match ? scoring.itemScore(toScoredItem(match)) : null;
        if (score !== null && otherScore !== null) differences.push(score - otherScore);
      }
      return mean(differences);
    };
    expect(await page.textContent('[data-testid="delta-1-0"] b, [data-testid="delta-1-0"] span')).toBe(shownSigned(paired(candidate, baseline)));
    expect(await page.textContent('[data-testid="delta-0-2"] b, [data-testid="delta-0-2"] span')).toBe(shownSigned(paired(baseline, third)));
    expect(await page.textContent('[data-testid="delta-2-0"] b, [data-testid="delta-2-0"] span')).toBe(shownSigned(paired(third, baseline)));
    await screenshot(page, tempDir, 'viewer-compare.png');

    // The grid: every id of any run; the filters narrow it to what the files say.
    const files = Object.values(runs);
    const ids = [...new Set(files.flatMap((records) => records.map((record) => record.id)))];
    const grid = '[data-testid="explorer-grid"]';
    await page.waitForSelector(`html[data-filtered="${ids.length}"]`, { state: 'attached' });
    const maps = files.map(byId);
    const failing = ids.filter((id) => maps.some((map) => {
      const record = map.get(id);
      return record !== undefined && (record.status !== 'ok' || record.criteria.some((criterion) => criterion.status === 'ok' && criterionFailed(criterion.points, criterion.met)));
    }));
    await page.check(`${grid} [data-testid="grid-failures"]`);
    await page.waitForSelector(`html[data-filtered="${failing.length}"]`, { state: 'attached' });
    await page.uncheck(`${grid} [data-testid="grid-failures"]`);
    const valueOf = (record: ResultRecord | undefined) => (record === undefined ? 'absent' : record.status === 'ok' ? `score ${scoring.itemScore(toScoredItem(record))}` : `status ${record.status}`);
    const changed = ids.filter((id) => new Set(maps.map((map) => valueOf(map.get(id)))).size > 1);
    expect(changed.length).toBeLessThan(ids.length);
    await page.check(`${grid} [data-testid="grid-changed"]`);
    await page.waitForSelector(`html[data-filtered="${changed.length}"]`, { state: 'attached' });
    // One criterion: its verdict in each run, in the cells.
    const criterionText = baseline[1].criteria[2].text!;
    await page.fill(`${grid} [data-testid="grid-criterion"]`, criterionText);
    await page.press(`${grid} [data-testid="grid-criterion"]`, 'Enter');
    const withCriterion = changed.filter((id) => new Set(maps.map((map) => {
      const record = map.get(id);
      const criterion = record?.criteria.find((entry) => entry.text === criterionText);
      return record === undefined ? 'absent' : criterion ? verdictKey(criterion) : 'none';
    })).size > 1 && maps.some((map) => map.get(id)?.criteria.some((entry) => entry.text === criterionText)));
    await page.waitForSelector(`html[data-filtered="${withCriterion.length}"]`, { state: 'attached' });
    const firstRow = withCriterion[0];
    expect(await page.$$eval(`${grid} .vrow[data-item-id="${firstRow}"] [data-testid="grid-cell"]`, (cells) => cells.map((cell) => cell.dataset.verdict ?? cell.textContent))).toEqual(
      maps.map((map) => {
        const criterion = map.get(firstRow)?.criteria.find((entry) => entry.text === criterionText);
        return map.get(firstRow) === undefined ? 'absent' : criterion ? verdictKey(criterion) : 'none';
      }),
    );

    // Export of the rows shown.
    const [download] = await Promise.all([page.waitForEvent('download'), page.click(`${grid} [data-testid="export-csv"]`)]);
    const csvFile = join(tempDir, 'grid.csv');
    await download.saveAs(csvFile);
    const csv = readFileSync(csvFile, 'utf8').trim().split('\r\n').map((line) => line.split(','));
    expect(csv[0]).toEqual(['id', ...Object.keys(runs).flatMap((file) => [`${file} status`, `${file} score`, `${file} verdict`]), 'spread', 'criterion']);
    expect(csv.slice(1).map((row) => row[0])).toEqual(withCriterion);
    const csvRow = csv[1];
    Object.values(runs).forEach((records, index) => {
      const record = byId(records).get(firstRow);
      expect(csvRow.slice(1 + index * 3, 4 + index * 3)).toEqual(record ? [record.status, String(scoring.itemScore(toScoredItem(record)) ?? ''), verdictKey(record.criteria.find((entry) => entry.text === criterionText)!)] : ['absent', '', '']);
    });

    await page.locator('#grid').scrollIntoViewIfNeeded();
    await page.evaluate(() => (globalThis as unknown as { scrollBy(x: number, y: number): void }).scrollBy(0, -70));
    await screenshot(page, tempDir, 'viewer-grid.png');

    // A row's verdicts, criterion by criterion and run by run, and its link into a run's report.
    await page.click(`${grid} .vrow[data-item-id="${firstRow}"]`);
    await page.waitForSelector('[data-testid="grid-drawer"] [data-testid="verdict-grid"]');
    const cells = await page.$$eval('[data-testid="verdict-grid"] tbody tr', (trs) => trs.map((tr) => [tr.dataset.criterionId ?? '', ...Array.from(tr.querySelectorAll('td[data-verdict]'), (td) => (td as unknown as { dataset: Record<string, string> }).dataset.verdict)]));
    const referenceRecord = byId(baseline).get(firstRow)!;
    expect(cells.map((row) => row[0])).toEqual(referenceRecord.criteria.map((criterion) => criterion.id));
    expect(cells.map((row) => row.slice(1))).toEqual(referenceRecord.criteria.map((criterion) => maps.map((map) => {
      const match = map.get(firstRow)?.criteria.find((entry) => entry.id === criterion.id);
      return match ? verdictKey(match) : 'absent';
    })));
    await screenshot(page, tempDir, 'viewer-item.png');
    await Promise.all([page.waitForURL(/\/run\?file=candidate\.jsonl#item=/), page.click('[data-testid="grid-drawer"] [data-testid="open-in-run"] >> nth=1')]);
    await ready(page);
    await page.waitForSelector(`[data-testid="drawer"][data-item-id="${firstRow}"] [data-testid="criteria"]`);

    // The probe report, in its own view.
    await page.goto(`${viewer.url}run?file=probe.json`);
    await ready(page);
    const probeRows = probeReport.probes.reduce((total, result) => total + 1 + Object.keys(result.byVariant ?? {}).length, 0);
    expect(await page.locator('[data-testid="probe-table"] tbody tr').count()).toBe(probeRows);
    expect(await page.textContent('[data-testid="probe-table"] tbody tr >> nth=0 >> [data-testid="probe-drift"]')).toBe(shownSigned(probeReport.probes[0].drift.mean!, 4));
    expect(await page.getAttribute('[data-testid="probe-table"] tbody tr >> nth=0', 'data-flagged')).toBe(probeReport.probes[0].flagged ? '1' : '0');
    expect(errors).toEqual([]);
    await page.close();
  });
});
