/**
 * Capabilities are one object on the judge, learned live, and every wrapper forwards it whole:
 * a wrapper that copied or dropped one would refuse image items, count them as free in a dry
 * run, or refuse probability verdicts it could give.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { createBatchJudge, type BodyBuildingJudge } from '../src/batch/batch-judge.js';
import { createDryRunJudge, createPlanningDryRunJudge } from '../src/batch/dry-run.js';
import { BatchLedger } from '../src/batch/ledger.js';
import { batchServiceFor } from '../src/batch/services.js';
import { runCliCaptured } from '../src/cli/in-process.js';
import { applyFleetLimits } from '../src/fleet/limited-judge.js';
import { withExplanationLength } from '../src/grading/explanation.js';
import { createJudgePool } from '../src/judges/pool.js';
import type { Judge, JudgeCapabilities } from '../src/judges/types.js';
import { startFakeGemini } from '../src/testing/fake-gemini.js';
import { binaryVerdict } from '../src/testing/fake-judge.js';
import { solidPng } from '../src/testing/png.js';
import { redisTest } from '../src/testing/redis-fixture.js';
import { test } from '../src/testing/vitest-fixtures.js';

/** A judge whose capabilities change as it "learns", as the OpenAI-compatible judge's do. */
function learningJudge(): { judge: BodyBuildingJudge; learn(): void } {
  let learned = false;
  const capabilities: JudgeCapabilities = {
    images: true,
    get tokenProbabilities() {
      return learned ? false : undefined;
    },
    maxConcurrency: 3,
    get limits() {
      return learned ? { maxOutputTokens: 512, contextWindow: 4096 } : {};
    },
  };
  const judge: BodyBuildingJudge = {
    provenance: { id: 'openai:learner', model: 'learner', baseUrl: 'http://127.0.0.1:9/v1' },
    capabilities,
    complete: async () => ({ text: '{"criteria_met": true}', usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 } }),
    requestBody: (request) => ({ model: 'learner', messages: request.messages }),
  };
  return { judge, learn: () => void (learned = true) };
}

const snapshot = (capabilities: JudgeCapabilities) => ({ images: capabilities.images, tokenProbabilities: capabilities.tokenProbabilities, maxConcurrency: capabilities.maxConcurrency, limits: capabilities.limits });

function imageItems(directory: string): string {
  const file = join(directory, 'items.jsonl');
  const png = `data:image/png;base64,${solidPng(4, 4, [200, 30, 30]).toString('base64')}`;
  writeFileSync(file, `${JSON.stringify({ id: 'img', prompt: 'What colour is it?', response: [{ type: 'text', text: 'It is red.' }, { type: 'image_url', image_url: { url: png } }], rubric: { criteria: [{ id: 'red', text: 'Says the image is red', points: 1 }] } })}\n`);
  return file;
}

describe('judge capabilities', () => {
  redisTest('every wrapper forwards the inner judge\'s capabilities whole, and live', async ({ redis, makeTempDir }) => {
    const { judge, learn } = learningJudge();
    const ledger = new BatchLedger(join(makeTempDir('rubricate-capabilities-'), 'cache.sqlite'));
    const service = batchServiceFor('openai', { model: 'openai:learner', endpoint: { baseUrl: 'http://127.0.0.1:9/v1' } }, { apiKey: 'sk-unused-0123456789' });
    const [fleet] = await applyFleetLimits([judge], redis.url, { globalConcurrency: 2 });
    const wrappers: Record<string, Judge> = {
      pool: createJudgePool([judge]),
      batch: createBatchJudge({ inner: judge, service, ledger }),
      'dry run': createDryRunJudge(judge),
      'planning dry run': createPlanningDryRunJudge(judge),
      'fleet limits': fleet,
      'pinned explanations': withExplanationLength(judge, 'short', true),
    };
    try {
      for (const [name, wrapper] of Object.entries(wrappers)) expect(snapshot(wrapper.capabilities), name).toEqual(snapshot(judge.capabilities));
      learn();
      expect(snapshot(judge.capabilities)).toMatchObject({ tokenProbabilities: false, limits: { maxOutputTokens: 512 } });
      for (const [name, wrapper] of Object.entries(wrappers)) expect(snapshot(wrapper.capabilities), name).toEqual(snapshot(judge.capabilities));
    } finally {
      await fleet.close?.();
      ledger.close();
    }
  });

  test('gemini: grades an image item with the image as inline data', async ({ closeAfter, tempDir }) => {
    const gemini = closeAfter(await startFakeGemini(() => ({ json: { explanation: 'Red.', criteria_met: true } }), { apiKey: 'gemini-key-0123456789' }));
    const out = join(tempDir, 'results.jsonl');
    const result = await runCliCaptured(['grade', '--input', imageItems(tempDir), '--out', out, '--no-cache', '--quiet', '--judge', 'gemini:gemini-2.5-flash', '--judge-base-url', gemini.baseUrl, '--judge-api-key', 'gemini-key-0123456789']);
    expect(result.code, result.stderr).toBe(0);
    const contents = gemini.requests[0].body.contents as Array<{ parts: Array<{ inlineData?: { mimeType: string; data: string } }> }>;
    const inline = contents.flatMap((content) => content.parts).find((part) => part.inlineData);
    expect(inline?.inlineData?.mimeType).toBe('image/png');
    expect(JSON.parse(readFileSync(out, 'utf8'))).toMatchObject({ status: 'ok', criteria: [{ met: true }] });
  });

  test('--dry-run counts the calls and tokens of image items', async ({ startJudge, tempDir }) => {
    const fake = await startJudge(() => ({ content: binaryVerdict(true) }));
    const result = await runCliCaptured(['grade', '--input', imageItems(tempDir), '--out', join(tempDir, 'results.jsonl'), '--no-cache', '--dry-run', '--judge', 'openai:gpt-4.1', '--judge-base-url', fake.baseUrl]);
    expect(result.code, result.stderr).toBe(0);
    const estimate = JSON.parse(result.stdout) as { judge_calls: number; input_tokens: number };
    expect(estimate.judge_calls).toBe(1);
    expect(estimate.input_tokens).toBeGreaterThan(0);
    expect(fake.requests).toHaveLength(0);
  });
});
