/**
 * Token counts a judge reports are checked before they are counted or billed: a count that
 * cannot be true (1e300, negative, fractional, a string) is left out of the tokens and the cost,
 * counted in `usage.implausible_usage` and announced, never billed as $3e+295 or silently as $0.
 * Through the CLI in this process, against loopback OpenAI and Anthropic judges.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { test } from '../src/testing/vitest-fixtures.js';
import { binaryVerdict } from '../src/testing/fake-judge.js';
import { startFakeAnthropic } from '../src/testing/fake-anthropic.js';
import { runCliInProcess } from './helpers.js';
import { hangGuard } from '../src/testing/hang-guard.js';

interface Metrics {
  usage: { prompt_tokens: number; completion_tokens: number; cost_usd: number | null; implausible_usage?: { replies: number; example: string } };
}

function writeItems(directory: string): string {
  const file = join(directory, 'items.jsonl');
  const lines = [0, 1].map((index) => JSON.stringify({ id: `item-${index}`, prompt: `Question ${index}`, response: `Answer ${index}`, rubric: { criteria: [{ id: 'c1', text: 'Says hello', points: 1 }, { id: 'c2', text: 'Says goodbye', points: 1 }] } }));
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

describe('implausible token counts from a judge', { timeout: hangGuard(60_000) }, () => {
  test('OpenAI-compatible: 1e300, -5 and 2.5 are left out and flagged; the plausible replies are billed', async ({ tempDir, startJudge }) => {
    const judge = await startJudge((request) => {
      const item = request.response === 'Answer 0' ? 0 : 1;
      const criterion = request.criteria[0]?.id;
      const usage = item === 0 && criterion === 'c1' ? { prompt_tokens: 1e300 } : item === 0 ? { completion_tokens: -5 } : criterion === 'c1' ? { prompt_tokens: 2.5 } : {};
      return { content: binaryVerdict(true), usage };
    });
    const input = writeItems(tempDir);
    const before = readFileSync(input, 'utf8');
    const metricsFile = join(tempDir, 'metrics.json');
    const result = await runCliInProcess(['grade', '--input', input, '--out', join(tempDir, 'out.jsonl'), '--metrics', metricsFile, '--judge', 'openai:gpt-4.1', '--judge-base-url', judge.baseUrl, '--judge-api-key', 'sk-test', '--no-cache', '--quiet']);
    // The verdicts are fine: only the accounting was refused.
    expect(result.code, result.stderr).toBe(0);
    const { usage } = JSON.parse(readFileSync(metricsFile, 'utf8')) as Metrics;
    // Counted: 100 + 100 prompt tokens (two replies), 20 + 20 + 20 completion tokens (the -5 left out).
    expect([usage.prompt_tokens, usage.completion_tokens]).toEqual([200, 60]);
    expect(usage.cost_usd).toBeCloseTo((200 * 2 + 60 * 8) / 1e6, 9);
    expect(usage.implausible_usage?.replies).toBe(3);
    expect(usage.implausible_usage?.example).toMatch(/^(prompt_tokens 1e\+300|completion_tokens -5|prompt_tokens 2\.5)$/);
    expect(result.stderr).toMatch(/warning: 3 judge replies reported token counts that cannot be true \(.+\): they are left out of the tokens and the cost/);
    expect(readFileSync(input, 'utf8')).toBe(before);
  });

  test('Anthropic: a string and a negative count are flagged, never billed', async ({ tempDir, closeAfter }) => {
    const anthropic = closeAfter(await startFakeAnthropic(() => ({ input: binaryVerdict(true), usage: { input_tokens: '9999999', output_tokens: -40 } })));
    const metricsFile = join(tempDir, 'metrics.json');
    const result = await runCliInProcess(['grade', '--input', writeItems(tempDir), '--out', join(tempDir, 'out.jsonl'), '--metrics', metricsFile, '--judge', 'anthropic:claude-sonnet-4-5', '--judge-base-url', anthropic.baseUrl, '--judge-api-key', 'test-anthropic-key', '--no-cache', '--quiet']);
    expect(result.code, result.stderr).toBe(0);
    const { usage } = JSON.parse(readFileSync(metricsFile, 'utf8')) as Metrics;
    expect([usage.prompt_tokens, usage.completion_tokens, usage.cost_usd]).toEqual([0, 0, 0]);
    expect(usage.implausible_usage).toEqual({ replies: 4, example: 'input_tokens "9999999", output_tokens -40' });
    expect(result.stderr).toContain('warning: 4 judge replies reported token counts that cannot be true');
  });
});
