/**
 * Process rewards as the report shows them, in headless Chromium, from a real `rubricate grade`
 * run on a step-scoped rubric: the drawer lists each step's verdict under the step criterion with
 * its rule, and the item's step rewards; a step in error shows as an error with its reason, never
 * as 0. The Markdown summary names a step criterion's rule.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect } from 'vitest';
import { runCliCaptured } from '../cli/in-process.js';
import { binaryVerdict, type FakeJudgeRequest, type FakeJudgeScript } from '../testing/fake-judge.js';
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

const useful = 'The step moves the task forward';
const answered = 'The final answer names Paris';

/** Three steps: a search, a lookup that goes wrong, the answer. */
function item(id: string, stepAggregate: unknown): Record<string, unknown> {
  return {
    id,
    prompt: 'What is the capital of France?',
    response: [
      { role: 'assistant', content: `Searching (${id}).`, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'search', arguments: '{"q": "capital of France"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'Paris is the capital of France.' },
      { role: 'assistant', content: 'Looking up the wrong city.', tool_calls: [{ id: 'c2', type: 'function', function: { name: 'lookup', arguments: '{"city": "Lyon"}' } }] },
      { role: 'tool', tool_call_id: 'c2', content: 'Lyon: population 500,000.' },
      { role: 'assistant', content: 'The capital of France is Paris.' },
    ],
    rubric: {
      criteria: [
        { id: 'useful', text: useful, points: 2, scope: 'step' },
        { id: 'answer', text: answered, points: 1 },
      ],
      step_aggregate: stepAggregate,
    },
  };
}

/** Step 2 goes wrong (not met); the trajectory tagged `breaks` gets HTTP 500 at step 2. */
const script: FakeJudgeScript = (request: FakeJudgeRequest) => {
  const criterion = request.criteria[0].text;
  const step = /\(Process step (\d+) of 3:/.exec(criterion)?.[1];
  if (step === undefined) return { content: binaryVerdict(criterion === answered && (request.response ?? '').includes('Paris')) };
  if (step === '2' && (request.response ?? '').includes('(breaks)')) return { status: 500 };
  return { content: binaryVerdict(step !== '2') };
};

interface Line {
  id: string;
  step_rewards: Array<number | null>;
  criteria: Array<{ id: string; error?: { message: string }; process: { verdicts: Array<{ step: number; status: string; error?: { code: string; message: string } }> } }>;
}

interface ShownStep {
  step: string | undefined;
  verdict: string | undefined;
  text: string;
}

describe.skipIf(!haveBrowser)('the report of process rewards', () => {
  test('the drawer lists each step verdict with the rule and the step rewards; a failed step is an error, not 0', async ({ startJudge, tempDir }) => {
    const fake = await startJudge(script);
    const input = join(tempDir, 'items.jsonl');
    writeFileSync(input, `${[item('min', 'min'), item('discounted', { rule: 'discounted', gamma: 0.5 }), item('breaks', 'mean')].map((entry) => JSON.stringify(entry)).join('\n')}\n`);
    const results = join(tempDir, 'results.jsonl');
    const reportFile = join(tempDir, 'report.html');
    const run = await runCliCaptured(['grade', '--input', input, '--out', results, '--report', reportFile, '--judge', 'openai:fake', '--judge-base-url', fake.baseUrl, '--no-cache', '--max-attempts', '1', '--quiet']);
    // The broken item is an error: the run says so in its exit code.
    expect(run.code, run.stderr).not.toBe(0);
    const lines = readFileSync(results, 'utf8').trim().split('\n').map((text) => JSON.parse(text) as Line);
    const broken = lines.find((line) => line.id === 'breaks')!;
    expect(broken.step_rewards).toEqual([1, null, 1]);
    const failedStep = broken.criteria[0].process.verdicts[1];
    expect(failedStep.status).toBe('error');

    const { page, errors } = await openOfflinePage(browser!, pathToFileURL(reportFile).href);
    await page.waitForSelector('html[data-report-ready]', { state: 'attached' });
    const stepsOf = async (id: string): Promise<{ rule: string; steps: ShownStep[]; rewards: Array<string | undefined>; rewardTexts: Array<string | null> }> => {
      await page.click(`#items .vrow[data-item-id="${id}"]`);
      const card = `[data-testid="drawer"][data-item-id="${id}"] .criterion[data-criterion-id="useful"]`;
      await page.waitForSelector(`${card} [data-testid="process-step"]`, { state: 'attached' });
      const shown = {
        rule: await page.$eval(`${card} [data-testid="step-rule"]`, (element) => element.textContent ?? ''),
        steps: await page.$$eval(`${card} [data-testid="process-step"]`, (elements) => elements.map((element) => ({ step: element.dataset.step, verdict: element.dataset.verdict, text: element.textContent ?? '' }))),
        rewards: await page.$$eval(`[data-testid="drawer"] [data-testid="step-reward"]`, (elements) => elements.map((element) => element.dataset.reward)),
        rewardTexts: await page.$$eval(`[data-testid="drawer"] [data-testid="step-reward"]`, (elements) => elements.map((element) => element.textContent)),
      };
      // Closed again, so the next row can be clicked.
      await page.keyboard.press('Escape');
      await page.waitForSelector('[data-testid="drawer"]', { state: 'detached' });
      return shown;
    };

    const min = await stepsOf('min');
    expect(min.rule).toBe('per step · min');
    expect(min.steps.map(({ step, verdict }) => [step, verdict])).toEqual([
      ['1', 'met'],
      ['2', 'not met'],
      ['3', 'met'],
    ]);
    expect(min.rewards).toEqual(['1', '0', '1']);

    expect((await stepsOf('discounted')).rule).toBe('per step · discounted γ=0.5');

    const breaks = await stepsOf('breaks');
    expect(breaks.rule).toBe('per step · mean');
    expect(breaks.steps.map(({ step, verdict }) => [step, verdict])).toEqual([
      ['1', 'met'],
      ['2', 'error'],
      ['3', 'met'],
    ]);
    // The failed step shows the judge's error and its reason, as the results line has it.
    expect(breaks.steps[1].text).toBe(`step 2: error ${failedStep.error!.code}: ${failedStep.error!.message}`);
    expect(breaks.rewards).toEqual(['1', 'error', '1']);
    expect(breaks.rewardTexts[1]).toBe('step 2: error (not graded)');
    expect(errors).toEqual([]);

    // The Markdown summary marks the step criterion (failed under min) with its rule.
    const markdown = await runCliCaptured(['report', '--input', results, '--out', '-']);
    expect(markdown.code, markdown.stderr).toBe(0);
    expect(markdown.stdout).toContain(`| ${useful} (per step, min) |`);
  });
});
