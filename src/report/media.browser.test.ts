/**
 * Trajectories and images in the HTML report, as a person sees them in headless Chromium:
 * items graded through the real CLI against a loopback judge, the report written from the
 * results, then opened from a file:// URL with every network request refused.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect } from 'vitest';
import { runCli } from '../cli/main.js';
import { exitCodes } from '../errors.js';
import type { FakeJudgeScript } from '../testing/fake-judge.js';
import { encodePng, solidPng } from '../testing/png.js';
import { normalizeTrajectory, trajectorySteps, type TrajectoryMessageInput } from '../trajectory/trajectory.js';
import { browserTest as test } from './browser-fixture.js';
import { chromiumAvailable, chromiumPath, openOfflinePage, type HeadlessBrowser } from './headless.js';
import { writeReportFromResults } from './index.js';
import { hangGuard } from '../testing/hang-guard.js';

const haveBrowser = chromiumAvailable();
if (!haveBrowser) console.warn(`report media browser tests skipped: ${chromiumPath} is absent (install it with: apt-get install -y chromium)`);

let browser: HeadlessBrowser | undefined;

const red = solidPng(16, 12, [255, 0, 0]);
// Pixels that do not compress: over the report's image cap in this test.
const noise = encodePng(48, 48, (x, y) => {
  const value = (x * 7919 + y * 104729 + x * y * 31) % 251;
  return [value, (value * 3) % 256, (value * 7) % 256];
});
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

const trajectory: TrajectoryMessageInput[] = [
  { role: 'user', content: 'Cancel reservation ABC123, please.' },
  { role: 'assistant', content: null, reasoning: 'Look the reservation up first.', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_reservation_details', arguments: '{"reservation_id":"ABC123"}' } }] },
  { role: 'tool', tool_call_id: 'c1', content: '{"reservation_id":"ABC123","status":"active","flights":[{"flight_number":"HAT001"}]}' },
  { role: 'assistant', content: 'Reservation ABC123 (flight HAT001) will be cancelled.\n\n[step 9] is not a step, only text. Shall I proceed (yes/no)?' },
  { role: 'user', content: 'yes' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'c2', type: 'function', function: { name: 'cancel_reservation', arguments: '{"reservation_id":"ABC123"}' } }] },
  { role: 'tool', tool_call_id: 'c2', content: '{"status":"cancelled"}' },
  { role: 'assistant', content: 'Done: ABC123 is cancelled.' },
];

test.beforeAll(async ({ openBrowserContext }) => {
  if (!haveBrowser) return;
  browser = await openBrowserContext({ width: 1360, height: 900 });
});

afterAll(async () => {
  await browser?.close();
});

/** Every criterion met, the confirmation one citing the user's yes at step 6. */
const citingJudge: FakeJudgeScript = (request) => {
  const criterion = request.criteria[0];
  if (criterion.id === 'confirmed') return { content: { explanation: 'The user said yes at step 6 before the cancel call at step 7.', criteria_met: true } };
  return { content: { explanation: 'The picture is red.', criteria_met: true } };
};

async function openItem(page: Page, id: string): Promise<void> {
  await page.fill('#items input[type="search"]', id);
  await page.waitForSelector('html[data-filtered="1"]');
  await page.click(`.vrow[data-item-id="${id}"]`);
  await page.waitForSelector(`[data-testid="drawer"][data-item-id="${id}"] .message`);
}

describe.skipIf(!haveBrowser)('trajectories and images in the HTML report (headless Chromium)', () => {
  test('shows a trajectory as collapsible numbered steps with tool calls marked and cited steps linked, and images from their bytes', async ({ startJudge, tempDir }) => {
    const items = [
      {
        id: 'agent',
        prompt: 'You are an airline agent. Confirm before any write.',
        response: trajectory,
        rubric: {
          criteria: [
            { id: 'cancelled', text: 'The agent cancels ABC123.', check: { type: 'tool_args_match', name: 'cancel_reservation', args: { reservation_id: 'ABC123' } } },
            { id: 'confirmed', text: 'Before the write, the agent obtains an explicit yes; cite the steps.' },
          ],
        },
      },
      {
        id: 'picture',
        prompt: [{ role: 'user', content: [{ type: 'text', text: 'What colour is this?' }, { type: 'image_url', image_url: { url: 'red.png' } }] }],
        response: [{ type: 'text', text: 'Red. Here is a noisy one:' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${noise.toString('base64')}` } }],
        rubric: { criteria: [{ id: 'colour', text: 'The answer says red.' }] },
      },
    ];
    const fake = await startJudge(citingJudge);
    writeFileSync(join(tempDir, 'red.png'), red);
    const input = join(tempDir, 'items.jsonl');
    writeFileSync(input, items.map((item) => JSON.stringify(item)).join('\n') + '\n');
    const results = join(tempDir, 'results.jsonl');
    const code = await runCli(['grade', '--input', input, '--out', results, '--judge', 'openai:vision', '--judge-base-url', fake.baseUrl, '--judge-api-key', 'test', '--no-cache', '--quiet'], {
      stdout: () => {},
      stderr: () => {},
      signal: new AbortController().signal,
    });
    expect(code).toBe(exitCodes.success);
    const lines = (await readFile(results, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { id: string; criteria: Array<{ id: string; steps?: number[] }>; step_offsets?: number[]; images?: Array<{ sha256: string; data?: string }> });
    expect(lines[0].step_offsets).toHaveLength(trajectorySteps(normalizeTrajectory(trajectory)).length);
    expect(lines[0].criteria.find((criterion) => criterion.id === 'confirmed')!.steps).toEqual([6, 7]);
    expect(lines[1].images!.map((image) => image.sha256)).toEqual([sha(red), sha(noise)]);
    expect(Buffer.from(lines[1].images![0].data!, 'base64').equals(red)).toBe(true);

    // A cap between the two images' sizes: the red one is embedded, the noisy one is not.
    expect(red.length).toBeLessThan(1000);
    expect(noise.length).toBeGreaterThan(1000);
    const out = join(tempDir, 'report.html');
    await writeReportFromResults({ input: results, out, maxImageBytes: 1000 });
    const { page, errors } = await openOfflinePage(browser!, pathToFileURL(out).href);
    await page.waitForSelector('html[data-report-ready], html[data-report-error]');
    expect(await page.getAttribute('html', 'data-report-error')).toBeNull();

    // The trajectory: every step, in order, with its kind, tool name and body as graded.
    await openItem(page, 'agent');
    const expected = trajectorySteps(normalizeTrajectory(trajectory));
    const shownSteps = await page.$$eval('[data-testid="step"]', (elements) =>
      elements.map((element) => ({
        number: Number(element.dataset.step),
        kind: element.dataset.kind,
        tool: element.querySelector('[data-testid="step-tool"]')?.textContent ?? null,
        body: element.querySelector('.step-body')?.textContent ?? '',
        open: element.open,
      })),
    );
    expect(shownSteps.map(({ number, kind, tool }) => ({ number, kind, tool }))).toEqual(
      expected.map((step) => ({ number: step.number, kind: step.kind, tool: step.toolName ?? null })),
    );
    expect(shownSteps.map((step) => step.body)).toEqual(expected.map((step) => (step.kind === 'tool_call' ? JSON.stringify(step.toolArguments) : step.text)));
    expect(await page.textContent('[data-testid="trajectory-summary"]')).toBe(`${expected.length} steps · 2 tool calls`);
    // Tool calls are marked; reasoning starts folded, messages open.
    expect(await page.locator('[data-testid="step"].step-tool_call').count()).toBe(2);
    expect(await page.$eval('[data-testid="step"].step-tool_call summary', (element) => element.ownerDocument.defaultView.getComputedStyle(element.parentElement).backgroundColor)).not.toBe('rgb(255, 255, 255)');
    expect(shownSteps.find((step) => step.kind === 'reasoning')!.open).toBe(false);
    expect(shownSteps.find((step) => step.kind === 'user')!.open).toBe(true);

    // Collapsible: collapse all, then open one step by clicking its summary.
    await page.click('[data-testid="collapse-steps"]');
    expect(await page.$$eval('[data-testid="step"]', (elements) => elements.filter((element) => element.open).length)).toBe(0);
    await page.click('[data-testid="step"][data-step="3"] summary');
    expect(await page.$eval('[data-testid="step"][data-step="3"]', (element) => element.open)).toBe(true);
    expect(await page.isVisible('[data-testid="step"][data-step="3"] .step-body')).toBe(true);
    expect(await page.isVisible('[data-testid="step"][data-step="4"] .step-body')).toBe(false);

    // The verdict cites steps 6 and 7; clicking one opens and marks that step.
    const cited = await page.$$eval('[data-criterion-id="confirmed"] [data-testid="cited-step"]', (buttons) => buttons.map((button) => button.textContent));
    expect(cited).toEqual(['step 6', 'step 7']);
    await page.click('[data-criterion-id="confirmed"] [data-testid="cited-step"][data-step="7"]');
    expect(await page.$eval('[data-testid="step"][data-step="7"]', (element) => element.open && element.classList.contains('step-revealed'))).toBe(true);
    expect(await page.textContent('[data-testid="step"][data-step="7"] [data-testid="step-tool"]')).toBe('cancel_reservation');

    // The image item: the red PNG drawn from the embedded bytes, the noisy one as a placeholder.
    await page.click('[data-testid="drawer-close"]');
    await openItem(page, 'picture');
    const shownImage = await page.waitForSelector('[data-testid="image"] img');
    await page.waitForFunction((image) => image.complete && image.naturalWidth > 0, shownImage);
    const drawn = await shownImage.evaluate((image) => {
      const canvas = image.ownerDocument.createElement('canvas');
      canvas.width = image.naturalWidth;
      canvas.height = image.naturalHeight;
      const context = canvas.getContext('2d')!;
      context.drawImage(image, 0, 0);
      return { width: image.naturalWidth, height: image.naturalHeight, pixel: Array.from(context.getImageData(5, 5, 1, 1).data), src: image.getAttribute('src') ?? '' };
    });
    expect(drawn).toMatchObject({ width: 16, height: 12, pixel: [255, 0, 0, 255] });
    expect(Buffer.from(drawn.src.replace(/^data:image\/png;base64,/, ''), 'base64').equals(red)).toBe(true);
    // It stands where its placeholder stood: in the prompt message, after the question.
    expect(await page.$eval('[data-testid="image"]', (element) => element.closest('.message')?.textContent?.startsWith('userWhat colour is this?'))).toBe(true);
    const placeholder = await page.textContent('[data-testid="image-placeholder"] .image-missing');
    expect(placeholder).toMatch(/^Image 2 not shown: .* is over the report's per-image limit of 1000 bytes$/);
    expect(await page.getAttribute('[data-testid="image-placeholder"]', 'data-sha256')).toBe(sha(noise));
    expect(await page.locator('img').count()).toBe(1);
    expect(errors).toEqual([]);
    await page.close();
  }, hangGuard(120_000));

  test('every trajectory check kind shows its verdict and detail, its cited steps linked; a check in error shows why', async ({ tempDir }) => {
    // Step 8 is the cancel_reservation result, which final_state reads: it cites that step, not the call.
    const checks: Array<{ id: string; check: Record<string, unknown>; verdict: string; detail: string; steps: number[] }> = [
      { id: 'called', check: { type: 'tool_called', name: 'cancel_reservation' }, verdict: 'Met', detail: '1 call(s): cancel_reservation@step 7', steps: [7] },
      { id: 'args', check: { type: 'tool_args_match', name: 'cancel_reservation', args: { reservation_id: 'ABC123' } }, verdict: 'Met', detail: 'matching call(s) at step 7', steps: [7] },
      { id: 'order', check: { type: 'tool_order', before: 'get_reservation_details', after: 'cancel_reservation' }, verdict: 'Met', detail: 'get_reservation_details@step 3, first cancel_reservation@step 7', steps: [3, 7] },
      { id: 'after', check: { type: 'no_tool_after', tool: 'cancel_reservation' }, verdict: 'Met', detail: 'nothing called after cancel_reservation@step 7', steps: [7] },
      { id: 'state', check: { type: 'final_state', tool: 'cancel_reservation', path: 'status', equals: 'cancelled' }, verdict: 'Met', detail: 'status matches (step 8)', steps: [8] },
      { id: 'length', check: { type: 'step_count_at_most', max: 5 }, verdict: 'Not met', detail: '9 steps', steps: [] },
      { id: 'said', check: { type: 'message_matches', pattern: 'is cancelled', scope: 'assistant' }, verdict: 'Met', detail: 'matched at step 9', steps: [9] },
    ];
    const items = [
      { id: 'checked', prompt: 'Cancel ABC123.', response: trajectory, rubric: { criteria: checks.map(({ id, check }) => ({ id, text: `Check ${id}`, check })) } },
      { id: 'plain', prompt: 'Cancel ABC123.', response: 'Cancelled.', rubric: { criteria: [{ id: 'called', text: 'Calls cancel', check: { type: 'tool_called', name: 'cancel_reservation' } }] } },
    ];
    const input = join(tempDir, 'checks.jsonl');
    writeFileSync(input, items.map((item) => JSON.stringify(item)).join('\n') + '\n');
    const results = join(tempDir, 'checks-results.jsonl');
    const code = await runCli(['grade', '--input', input, '--out', results, '--judge', 'none', '--no-cache', '--quiet'], { stdout: () => {}, stderr: () => {}, signal: new AbortController().signal });
    expect(code).toBe(exitCodes.itemsFailed);
    const out = join(tempDir, 'checks.html');
    await writeReportFromResults({ input: results, out });
    const { page, errors } = await openOfflinePage(browser!, pathToFileURL(out).href);
    await page.waitForSelector('html[data-report-ready], html[data-report-error]');
    await page.fill('#items input[type="search"]', 'checked');
    await page.waitForSelector('html[data-filtered="1"]');
    await page.click('.vrow[data-item-id="checked"]');
    await page.waitForSelector('[data-testid="drawer"][data-item-id="checked"] [data-testid="explanation"]');
    for (const { id, verdict, detail, steps } of checks) {
      const card = `[data-testid="drawer"] .criterion[data-criterion-id="${id}"]`;
      expect(await page.textContent(`${card} [data-testid="verdict"]`), id).toBe(verdict);
      expect(await page.textContent(`${card} [data-testid="explanation"]`), id).toBe(`Check: ${detail}`);
      expect(await page.$$eval(`${card} [data-testid="cited-step"]`, (buttons) => buttons.map((button) => Number(button.getAttribute("data-step")))), id).toEqual(steps);
    }
    await page.click('.criterion[data-criterion-id="state"] [data-testid="cited-step"][data-step="8"]');
    expect(await page.$eval('[data-testid="step"][data-step="8"]', (element) => element.open && element.classList.contains('step-revealed') && element.dataset.kind === 'tool_result')).toBe(true);
    await page.click('[data-testid="drawer-close"]');
    await page.fill('#items input[type="search"]', 'plain');
    await page.waitForSelector('.vrow[data-item-id="plain"]');
    await page.click('.vrow[data-item-id="plain"]');
    await page.waitForSelector('[data-testid="drawer"][data-item-id="plain"] .criterion[data-criterion-id="called"]');
    expect(await page.textContent('[data-testid="drawer"] .criterion[data-criterion-id="called"]')).toContain('CHECK_INVALID: check "tool_called" needs a trajectory response');
    expect(errors).toEqual([]);
    await page.close();
  }, hangGuard(120_000));
});
