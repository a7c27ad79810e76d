/**
 * A run that partly failed, as its report shows it in headless Chromium: items graded through
 * the real CLI with `--keep-requests` against a loopback judge that answers some items with
 * text no parser can read (and echoes the API key there), plus input lines that are not items.
 * The page must lead with the share of items the score covers, the errors by code and the advice
 * the CLI printed; show the judge call behind each verdict as the judge saw and answered it, with
 * its latency and no key; and render a Markdown response as Markdown without any of its markup
 * or links becoming live. With RUBRICATE_UPDATE_SCREENSHOT=1 it writes two screenshots in docs/.
 */
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect } from 'vitest';
import { runCliCaptured } from '../cli/in-process.js';
import { exitCodes } from '../errors.js';
import { scoreCoverage } from '../pipeline/error-summary.js';
import { readResults, toScoredItem, type ResultRecord } from '../results/results.js';
import { aggregate, getScoring } from '../scoring/registry.js';
import { browserTest as test } from './browser-fixture.js';
import { chromiumAvailable, chromiumPath, openOfflinePage, type HeadlessBrowser } from './headless.js';

const haveBrowser = chromiumAvailable();
if (!haveBrowser) console.warn(`failed-run report test skipped: ${chromiumPath} is absent (install it with: apt-get install -y chromium)`);

let browser: HeadlessBrowser | undefined;
test.beforeAll(async ({ openBrowserContext }) => {
  if (haveBrowser) browser = await openBrowserContext({ width: 1360, height: 900 });
});
afterAll(async () => {
  await browser?.close();
});

const apiKey = 'sk-test-echoed0123456789abcdef';

/** The page as it stands; with RUBRICATE_UPDATE_SCREENSHOT=1 also the tracked image in docs/. */
async function screenshot(page: Page, directory: string, name: string): Promise<void> {
  const file = join(directory, name);
  await page.screenshot({ path: file });
  if (process.env.RUBRICATE_UPDATE_SCREENSHOT === '1') copyFileSync(file, resolve(process.cwd(), 'docs', name));
}
const markdownResponse = [
  '## Plan',
  '',
  '- **Rest** and drink fluids; see [the guide](javascript:alert(1)) <img src=x onerror="window.__injected = 1">',
  '- Call a doctor if it `lasts`',
  '',
  '```',
  '</script><script>window.__injected = 2</script>',
  '```',
].join('\n');

describe.skipIf(!haveBrowser)('the report of a run with failures', () => {
  test('leads with the coverage banner, the errors by code and the advice the CLI printed; shows each judge call with its latency, redacted; renders Markdown inertly', async ({ startJudge, tempDir }) => {
    const items = Array.from({ length: 8 }, (_, index) => ({
      id: index % 3 === 2 ? `broken-${index}` : `item-${index}`,
      prompt: `Question ${index}: what should I do about a mild fever?`,
      response: index === 0 ? markdownResponse : `Rest and drink fluids (${index}).`,
      rubric: { criteria: [{ id: 'rest', text: 'Advises rest', points: 3 }, { id: 'doctor', text: 'Says when to see a doctor', points: 2 }] },
    }));
    const lines = [...items.map((item) => JSON.stringify(item)), 'not json', JSON.stringify({ id: 'no-rubric', prompt: 'p', response: 'r' })];
    const input = join(tempDir, 'items.jsonl');
    writeFileSync(input, lines.join('\n') + '\n');
    const fake = await startJudge((request) => {
      if (request.response?.includes('(2)') || request.response?.includes('(5)')) return { content: `I cannot grade this; your key ${apiKey} was sent` };
      return { content: { explanation: `Judged ${request.criteria[0].id}.`, criteria_met: request.criteria[0].id === 'rest' } };
    });
    const results = join(tempDir, 'results.jsonl');
    const reportFile = join(tempDir, 'report.html');
    const run = await runCliCaptured(['grade', '--format', 'items', '--input', input, '--out', results, '--report', reportFile, '--judge', 'openai:m', '--judge-base-url', fake.baseUrl, '--judge-api-key', apiKey, '--max-attempts', '2', '--keep-requests', '--no-cache', '--quiet']);
    expect(run.code, run.stderr).toBe(exitCodes.itemsFailed);
    expect(readFileSync(results, 'utf8')).not.toContain(apiKey);

    const records: ResultRecord[] = [];
    for await (const entry of readResults(results)) if (entry.kind === 'result') records.push(entry.record);
    const metrics = aggregate(getScoring('weighted_mean'), records.map(toScoredItem));
    expect(metrics.n_error).toBe(2);
    expect(metrics.n_invalid).toBe(2);
    // The CLI's own summary: "errors by code:" then "  CODE ×N: example", and "to finish: …" lines.
    const stderr = run.stderr.split('\n');
    const codes = stderr.slice(stderr.indexOf('errors by code:') + 1).filter((line) => /^ {2}\S+ ×\d+: /.test(line)).map((line) => /^ {2}(\S+) ×(\d+): /.exec(line)!.slice(1));
    const advice = stderr.filter((line) => line.startsWith('to finish: ')).map((line) => line.slice('to finish: '.length));
    expect(codes.map(([code]) => code).sort()).toEqual(['INPUT_INVALID', 'JUDGE_UNPARSEABLE']);
    expect(advice).toHaveLength(2);

    const { page, errors } = await openOfflinePage(browser!, pathToFileURL(reportFile).href);
    await page.waitForSelector('html[data-report-ready], html[data-report-error]', { state: 'attached' });
    expect(await page.getAttribute('html', 'data-report-error')).toBeNull();
    // The banner comes before the score.
    expect(await page.evaluate(() => {
      const doc = (globalThis as unknown as { document: { querySelector(selector: string): { compareDocumentPosition(other: unknown): number } } }).document;
      return doc.querySelector('[data-testid="failure-banner"]').compareDocumentPosition(doc.querySelector('[data-testid="headline"]')) & 4;
    })).toBe(4);
    expect(await page.textContent('[data-testid="coverage"]')).toBe(scoreCoverage(metrics));
    expect(scoreCoverage(metrics)).toBe('The score covers 60% of the items (6 of 10): 2 in error, 2 invalid.');
    const shownCodes = await page.$$eval('[data-testid="errors-by-code"] tbody tr', (rows) => rows.map((row) => [row.dataset.code ?? '', row.children[1].textContent ?? '']));
    expect(shownCodes.sort()).toEqual(codes.sort());
    expect(await page.$$eval('[data-testid="advice"] li', (entries) => entries.map((entry) => entry.textContent))).toEqual(advice.map((line) => `To finish: ${line}`));
    await screenshot(page, tempDir, 'report-failures.png');

    // A verdict's judge call: the messages the judge received, its raw reply, a latency.
    await page.fill('#items input[type="search"]', 'item-1');
    await page.waitForSelector('html[data-filtered="1"]');
    await page.click('#items .vrow[data-item-id="item-1"]');
    const restCall = '[data-testid="drawer"] .criterion[data-criterion-id="rest"] [data-testid="judge-call"]';
    await page.waitForSelector(restCall, { state: 'attached' });
    await page.click(`${restCall} summary`);
    const sent = fake.requests.find((request) => request.response === 'Rest and drink fluids (1).' && request.criteria[0]?.id === 'rest')!;
    expect(await page.$$eval(`${restCall} [data-testid="call-message"]`, (elements) => elements.map((element) => element.textContent))).toEqual(sent.messages.map((message) => message.content));
    expect(JSON.parse((await page.textContent(`${restCall} [data-testid="call-reply"]`))!)).toEqual({ explanation: 'Judged rest.', criteria_met: true });
    expect(Number(await page.getAttribute(restCall, 'data-latency'))).toBeGreaterThanOrEqual(0);
    await screenshot(page, tempDir, 'report-judge-call.png');
    await page.click('[data-testid="drawer-close"]');

    // An item in error: both attempts kept, each reply as the judge sent it, the key redacted.
    await page.fill('#items input[type="search"]', 'broken-2');
    await page.waitForSelector('html[data-filtered="1"]');
    await page.click('#items .vrow[data-item-id="broken-2"]');
    const brokenCalls = '[data-testid="drawer"] .criterion[data-criterion-id="rest"] [data-testid="judge-call"]';
    await page.waitForSelector(brokenCalls, { state: 'attached' });
    expect(await page.locator(brokenCalls).count()).toBe(2);
    expect(await page.$$eval(`${brokenCalls} [data-testid="call-reply"]`, (elements) => elements.map((element) => element.textContent))).toEqual(['I cannot grade this; your key [REDACTED] was sent', 'I cannot grade this; your key [REDACTED] was sent']);
    expect(await page.getAttribute('[data-testid="drawer"] .criterion[data-criterion-id="rest"]', 'data-verdict')).toBe('error');
    await page.click('[data-testid="drawer"] [data-testid="criteria-filter"] button[data-value="errors"]');
    expect(await page.$$eval('[data-testid="drawer"] [data-testid="criteria"] .criterion', (elements) => elements.map((element) => element.dataset.criterionId))).toEqual(['rest', 'doctor']);
    await page.click('[data-testid="drawer"] [data-testid="criteria-filter"] button[data-value="all"]');
    await page.click('[data-testid="drawer-close"]');

    // Markdown, rendered: structure, no live markup, links shown and not followable; then raw, as written.
    await page.fill('#items input[type="search"]', 'item-0');
    await page.waitForSelector('html[data-filtered="1"]');
    await page.click('#items .vrow[data-item-id="item-0"]');
    await page.waitForSelector('[data-testid="response-rendered"]');
    expect(await page.textContent('[data-testid="response-rendered"] h4')).toBe('Plan');
    expect(await page.$$eval('[data-testid="response-rendered"] li strong', (elements) => elements.map((element) => element.textContent))).toEqual(['Rest']);
    expect(await page.textContent('[data-testid="response-rendered"] .md-link')).toBe('the guide');
    expect(await page.textContent('[data-testid="response-rendered"] pre code')).toBe('</script><script>window.__injected = 2</script>');
    expect(await page.locator('[data-testid="drawer"] a, [data-testid="drawer"] img, [data-testid="response-rendered"] script').count()).toBe(0);
    await page.click('[data-testid="drawer"] .response-title button[data-value="raw"]');
    expect(await page.textContent('[data-testid="response"]')).toBe(markdownResponse);
    expect(await page.evaluate(() => (globalThis as { __injected?: number }).__injected)).toBeUndefined();
    expect(errors).toEqual([]);
    await page.close();
  });
});
