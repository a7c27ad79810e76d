/**
 * An agentic judge's tool calls, as the report's drawer shows them in headless Chromium: under
 * each criterion, the calls made before its verdict, in order, with what came back.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect } from 'vitest';
import { runCliCaptured } from '../cli/in-process.js';
import { toolCallSchemaName } from '../judges/agentic/agentic-judge.js';
import { binaryVerdict } from '../testing/fake-judge.js';
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

describe.skipIf(!haveBrowser)('the report of an agentic judge', () => {
  test('the drawer lists the tool calls made before each verdict', async ({ startJudge, tempDir }) => {
    // One search in the first tool turn, none after, then "met".
    const fake = await startJudge((request) => {
      const toolTurn = (request.body.response_format as { json_schema?: { name?: string } } | undefined)?.json_schema?.name === toolCallSchemaName;
      if (!toolTurn) return { content: binaryVerdict(true) };
      const made = request.messages.filter((message) => message.role === 'assistant').length;
      return { content: { tool_call: made === 0 ? { name: 'search', arguments: '{"query": "boiling point sea level"}' } : null } };
    });
    const results = join(tempDir, 'results.jsonl');
    const reportFile = join(tempDir, 'report.html');
    const run = await runCliCaptured(['grade', '--input', 'examples/agentic/items.jsonl', '--out', results, '--report', reportFile, '--judge', 'openai:m', '--judge-base-url', fake.baseUrl, '--judge-tools', 'search', '--documents', 'examples/agentic/sources.jsonl', '--no-cache', '--quiet']);
    expect(run.code, run.stderr).toBe(0);
    const line = JSON.parse(readFileSync(results, 'utf8').split('\n')[0]) as { id: string; criteria: Array<{ id: string; tool_calls: Array<{ summary: string }> }> };
    const [first] = line.criteria;

    const { page, errors } = await openOfflinePage(browser!, pathToFileURL(reportFile).href);
    await page.waitForSelector('html[data-report-ready]', { state: 'attached' });
    await page.click(`#items .vrow[data-item-id="${line.id}"]`);
    const rows = `[data-testid="drawer"] .criterion[data-criterion-id="${first.id}"] [data-testid="tool-call"]`;
    await page.waitForSelector(rows, { state: 'attached' });
    const shown = await page.$$eval(rows, (elements) => elements.map((element) => ({ outcome: element.dataset.outcome, text: element.textContent ?? '' })));
    expect(shown).toEqual([{ outcome: 'ok', text: `search {"query":"boiling point sea level"}: ${first.tool_calls[0].summary}` }]);
    expect(errors).toEqual([]);
  });
});
