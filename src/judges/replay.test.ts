import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { requestKey } from '../engine/request-key.js';
import { test } from '../testing/vitest-fixtures.js';
import { createReplayJudge, readRecordedVerdicts } from './replay.js';
import type { JudgeRequest } from './types.js';

const signal = new AbortController().signal;
const binarySchema = { type: 'object', properties: { explanation: { type: 'string' }, criteria_met: { type: 'boolean' } } };
const ordinalSchema = { type: 'object', properties: { explanation: { type: 'string' }, choice: { type: 'string', enum: ['1', '2', '3'] } } };

function request(item: string, criteria: string[], schema: Record<string, unknown>, name = 'criterion_verdict'): JudgeRequest {
  return { messages: [{ role: 'user', content: 'same text' }], output: { name, schema }, subject: { item, criteria }, logprobs: { top: 20 } };
}

describe('replay judge', () => {
  test('answers each criterion from its record, in the reply shape the request asks for', async ({ tempDir }) => {
    const file = join(tempDir, 'v.jsonl');
    await writeFile(
      file,
      [
        { judge: 'j', id: 'a', criterion_id: 'c', met: false },
        { judge: 'j', id: 'a', criterion_id: 'd', choice: 2 },
        { judge: 'j', id: 'b', criterion_id: 'c', probability: 0.75 },
      ]
        .map((line) => JSON.stringify(line))
        .join('\n'),
    );
    const judge = await createReplayJudge(file);
    expect(judge.provenance).toMatchObject({ id: `replay:${file}`, model: 'j', replayed: { file: 'v.jsonl', judge: 'j' } });
    expect(JSON.parse((await judge.complete(request('a', ['c'], binarySchema), { signal })).text)).toMatchObject({ criteria_met: false });
    const probability = await judge.complete(request('b', ['c'], binarySchema), { signal });
    const valueToken = probability.tokenProbabilities!.find((token) => token.token === 'true')!;
    expect(valueToken.top.map((entry) => [entry.token, Math.exp(entry.logprob)])).toEqual([
      ['true', 0.75],
      ['false', 0.25],
    ]);
    const batchedSchema = { type: 'object', properties: { verdicts: { type: 'object', properties: { c: binarySchema, d: ordinalSchema } } } };
    const batched = await judge.complete(request('a', ['c', 'd'], batchedSchema, 'criteria_verdicts'), { signal });
    expect(JSON.parse(batched.text)).toMatchObject({ verdicts: { c: { criteria_met: false }, d: { choice: '2' } } });
    expect(batched.usage).toEqual({ inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 });
    await expect(judge.complete(request('b', ['d'], ordinalSchema), { signal })).rejects.toMatchObject({ code: 'JUDGE_NOT_RECORDED' });
    await expect(judge.complete(request('a', ['c'], ordinalSchema), { signal })).rejects.toMatchObject({ code: 'JUDGE_UNSUPPORTED' });
    await expect(judge.complete({ messages: [], output: { name: 'x', schema: binarySchema } }, { signal })).rejects.toMatchObject({ code: 'JUDGE_UNSUPPORTED' });
    // Same text, two items: two cache keys for a replayed judge, one for any other.
    const keyOf = (provenance: typeof judge.provenance, item: string) => requestKey(provenance, 'v1', request(item, ['c'], binarySchema));
    expect(keyOf(judge.provenance, 'a')).not.toBe(keyOf(judge.provenance, 'b'));
    expect(keyOf({ id: 'openai:m', model: 'm' }, 'a')).toBe(keyOf({ id: 'openai:m', model: 'm' }, 'b'));
  });

  test('refuses a file whose lines name two judges, repeat a verdict or carry none', async ({ tempDir }) => {
    const file = join(tempDir, 'v.jsonl');
    const write = (lines: unknown[]) => writeFile(file, lines.map((line) => JSON.stringify(line)).join('\n'));
    await write([{ judge: 'j', id: 'a', criterion_id: 'c', met: true }, { judge: 'k', id: 'b', criterion_id: 'c', met: true }]);
    await expect(readRecordedVerdicts(file)).rejects.toMatchObject({ code: 'INPUT_INVALID', details: { line: 2, field: 'judge' } });
    await write([{ judge: 'j', id: 'a', criterion_id: 'c', met: true }, { judge: 'j', id: 'a', criterion_id: 'c', met: false }]);
    await expect(readRecordedVerdicts(file)).rejects.toMatchObject({ details: { line: 2, field: 'criterion_id' } });
    await write([{ judge: 'j', id: 'a', criterion_id: 'c' }]);
    await expect(readRecordedVerdicts(file)).rejects.toMatchObject({ details: { line: 1 } });
    await write([{ judge: 'j', id: 'a', criterion_id: 'c', distribution: { '1': 0.5, '2': 0.2 } }]);
    await expect(readRecordedVerdicts(file)).rejects.toThrow(/sums to 0.7/);
  });
});
