/**
 * A per-turn graded conversation, as its report's drawer shows it in headless Chromium: under a
 * criterion that applies to every assistant turn, one row per turn with that turn's own verdict
 * and explanation, and how they fold into the criterion's verdict.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect } from 'vitest';
import { runCliCaptured } from '../cli/in-process.js';
import { browserTest as test } from './browser-fixture.js';
import { chromiumAvailable, openOfflinePage, type HeadlessBrowser } from './headless.js';

const haveBrowser = chromiumAvailable();

let browser: HeadlessBrowser | undefined;
test.beforeAll(async ({ openBrowserContext }) => {
  if (haveBrowser) browser = await openBrowserContext({ width: 1360, height: 900 });
});
afterAll(async () => {
  await browser?.close();
});

describe.skipIf(!haveBrowser)('the report of a per-turn graded conversation', () => {
  test("the drawer shows each turn's verdict and explanation under the criterion, and the fold", async ({ startJudge, tempDir }) => {
    // Met when the turn (the response judged) names the user.
    const fake = await startJudge((request) => ({ content: { explanation: `Turn said: ${request.response?.slice(0, 20)}`, criteria_met: /Alex/.test(request.response ?? '') } }));
    const results = join(tempDir, 'results.jsonl');
    const reportFile = join(tempDir, 'report.html');
    const run = await runCliCaptured(['grade', '--input', 'examples/multiturn/conversations.jsonl', '--out', results, '--report', reportFile, '--judge', 'openai:m', '--judge-base-url', fake.baseUrl, '--no-cache', '--quiet']);
    expect(run.code, run.stderr).toBe(0);
    const line = JSON.parse(readFileSync(results, 'utf8').split('\n')[0]) as { id: string; criteria: Array<{ id: string; met: boolean; turns?: { aggregate: string; verdicts: Array<{ turn: number; met: boolean; explanation?: string }> } }> };
    const perTurn = line.criteria.find((criterion) => criterion.turns)!;
    expect(perTurn.turns!.verdicts.length).toBeGreaterThan(1);

    const { page, errors } = await openOfflinePage(browser!, pathToFileURL(reportFile).href);
    await page.waitForSelector('html[data-report-ready]', { state: 'attached' });
    await page.click(`#items .vrow[data-item-id="${line.id}"]`);
    const turns = `[data-testid="drawer"] .criterion[data-criterion-id="${perTurn.id}"] [data-testid="turn"]`;
    await page.waitForSelector(turns, { state: 'attached' });
    const shown = await page.$$eval(turns, (rows) => rows.map((row) => ({ turn: Number(row.dataset.turn), verdict: row.dataset.verdict, text: row.textContent ?? '' })));
    expect(shown.map((row) => [row.turn, row.verdict])).toEqual(perTurn.turns!.verdicts.map((verdict) => [verdict.turn, verdict.met ? 'met' : 'not met']));
    perTurn.turns!.verdicts.forEach((verdict, index) => expect(shown[index].text).toContain(verdict.explanation!));
    expect(await page.textContent(`[data-testid="drawer"] .criterion[data-criterion-id="${perTurn.id}"] [data-testid="turns"]`)).toContain(`${perTurn.turns!.aggregate} of the turns`);
    expect(errors).toEqual([]);
  });
});
