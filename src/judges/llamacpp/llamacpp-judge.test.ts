import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RubricateError } from '../../errors.js';
import { writeTinyGguf } from '../../testing/tiny-gguf.js';
import { safeParseJson } from '../../util/json.js';
import type { ChatMessage, JudgeReply, JudgeRequest, TokenProbability } from '../types.js';
import { createLlamaCppJudge, defaultContextSize, defaultLocalThreads, type LlamaCppJudge } from './llamacpp-judge.js';
import { test } from '../../testing/vitest-fixtures.js';

const verdictSchema = z.object({ explanation: z.string(), criteria_met: z.boolean() });
const verdictOutput = { name: 'verdict', schema: z.toJSONSchema(verdictSchema) as Record<string, unknown> };
const signal = () => new AbortController().signal;

function gradingMessages(criterion: string): ChatMessage[] {
  return [
    { role: 'system', content: 'You grade a response against one rubric criterion. Reply in JSON.' },
    { role: 'user', content: `Criterion: ${criterion}\nResponse: Drink water and rest.` },
  ];
}

function verdictRequest(criterion: string, extra: Partial<JudgeRequest> = {}): JudgeRequest {
  return { messages: gradingMessages(criterion), output: verdictOutput, temperature: 0, maxTokens: 120, ...extra };
}

function parseVerdict(reply: JudgeReply) {
  const parsed = safeParseJson(reply.text);
  expect(parsed.ok, reply.text).toBe(true);
  return verdictSchema.parse(parsed.ok ? parsed.value : undefined);
}

/** The JSON the judge writes itself around a verdict's two values (byte tokens on the tiny model). */
const forcedVerdictText = '{"explanation": ' + ', "criteria_met": ' + '}';

/** Tokens the model chose in a verdict reply: the explanation's JSON string, byte by byte, and one for the boolean. */
function chosenTokenCount(reply: JudgeReply): number {
  const explanation = JSON.stringify(parseVerdict(reply).explanation);
  return Buffer.byteLength(explanation) + 1;
}

/** Tokens of a rendered prompt for the byte-level tiny model: one per byte, one per special token. */
function byteTokenCount(rendered: string): number {
  return Buffer.byteLength(rendered.replace(/<\|(endoftext|im_start|im_end)\|>/g, '\u0001'));
}

/** P(criterion met) the way the grading code computes it: t-alternatives against f-alternatives where the value begins. */
function probabilityOfTrue(tokens: TokenProbability[]): number {
  let text = '';
  for (const entry of tokens) {
    if (/"criteria_met":\s*$/.test(text) && /^[tf]/.test(entry.token)) {
      const mass = (letter: string) => entry.top.filter((alternative) => alternative.token.startsWith(letter)).reduce((sum, alternative) => sum + Math.exp(alternative.logprob), 0);
      const forTrue = mass('t');
      const forFalse = mass('f');
      return forTrue / (forTrue + forFalse);
    }
    text += entry.token;
  }
  throw new Error(`no verdict position in ${JSON.stringify(text)}`);
}

describe('llama.cpp judge on the tiny generated model', () => {
  let directory: string;
  let trueJudge: LlamaCppJudge;
  let falseJudge: LlamaCppJudge;

  // The two models load once for the file's tests: loading is the slow part. They differ in their
  // weights only, and share a file name: one chat-wrapper resolution serves every judge here.
  test.beforeAll(async ({ fileTempDir }) => {
    directory = fileTempDir;
    const truePath = await writeTinyGguf({ path: path.join(directory, 'true', 'tiny.gguf'), bias: 'true' });
    const falsePath = await writeTinyGguf({ path: path.join(directory, 'false', 'tiny.gguf'), bias: 'false' });
    // One thread: on two cores llama.cpp with more threads than cores is ~50x slower per round.
    trueJudge = await createLlamaCppJudge({ model: truePath, threads: 1, sequences: 2, contextSize: 512 });
    falseJudge = await createLlamaCppJudge({ model: falsePath, threads: 1, contextSize: 512, id: 'gguf:tiny-false' });
  });

  afterAll(async () => {
    await trueJudge?.close();
    await falseJudge?.close();
  });

  it('describes itself: provenance, concurrency, threads, context', () => {
    expect(trueJudge.provenance).toEqual({
      id: `gguf:${path.join(directory, 'true', 'tiny.gguf')}`,
      model: 'tiny.gguf',
      baseUrl: path.join(directory, 'true', 'tiny.gguf'),
      variant: 'decoding:field-by-field',
    });
    expect(falseJudge.provenance.id).toBe('gguf:tiny-false');
    expect(trueJudge.capabilities.maxConcurrency).toBe(2);
    expect(falseJudge.capabilities.maxConcurrency).toBe(1);
    expect(trueJudge.threads).toBe(1);
    expect(trueJudge.contextSize).toBeGreaterThanOrEqual(512);
  });

  it('renders the messages through the model chat template (ChatML)', () => {
    expect(trueJudge.chatWrapperName).toBe('ChatML');
    const prompt = trueJudge.renderPrompt([
      { role: 'system', content: 'S' },
      { role: 'user', content: 'U1' },
      { role: 'assistant', content: 'A1' },
      { role: 'user', content: 'U2' },
    ]);
    expect(prompt).toContain('<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU1<|im_end|>\n<|im_start|>assistant\nA1<|im_end|>\n<|im_start|>user\nU2<|im_end|>\n');
    expect(prompt.endsWith('<|im_start|>assistant\n')).toBe(true);
  });

  it('gives grammar-constrained verdicts that parse, on two sequences at once', async () => {
    const criteria = ['mentions water', 'mentions rest', 'is polite', 'is short', 'cites a source', 'uses metric units'];
    const replies = await Promise.all(criteria.map((criterion, index) => trueJudge.complete(verdictRequest(criterion, { temperature: 1, seed: index }), { signal: signal() })));
    for (const reply of replies) {
      expect(typeof parseVerdict(reply).criteria_met).toBe('boolean');
      expect(reply.finishReason).toBe('stop');
      // The JSON around the values is written by the judge, not generated.
      expect(reply.usage.outputTokens).toBe(chosenTokenCount(reply));
    }
  });

  it('follows the rigging under greedy decoding: forced true and forced false', async () => {
    const yes = await trueJudge.complete(verdictRequest('mentions water'), { signal: signal() });
    const no = await falseJudge.complete(verdictRequest('mentions water'), { signal: signal() });
    expect(parseVerdict(yes).criteria_met).toBe(true);
    expect(parseVerdict(no).criteria_met).toBe(false);
  });

  it('starts every call from a clean state and reports the reused prefix', async () => {
    const first = await falseJudge.complete(verdictRequest('is concise'), { signal: signal() });
    const again = await falseJudge.complete(verdictRequest('is concise'), { signal: signal() });
    const other = await falseJudge.complete(verdictRequest('is warm'), { signal: signal() });
    const back = await falseJudge.complete(verdictRequest('is concise'), { signal: signal() });
    expect(again.text).toBe(first.text);
    expect(back.text).toBe(first.text);
    const concisePrompt = falseJudge.renderPrompt(gradingMessages('is concise'));
    const warmPrompt = falseJudge.renderPrompt(gradingMessages('is warm'));
    // Forced reply text is evaluated like prompt text.
    expect(first.usage.inputTokens).toBe(byteTokenCount(concisePrompt) + forcedVerdictText.length);
    expect(first.usage.outputTokens).toBe(chosenTokenCount(first));
    // The whole prompt but its last token is reused when the request repeats.
    expect(again.usage.cachedInputTokens).toBe(byteTokenCount(concisePrompt) - 1);
    // Only the part before the criterion text is shared with a different criterion.
    let shared = 0;
    while (concisePrompt[shared] === warmPrompt[shared]) shared += 1;
    expect(other.usage.cachedInputTokens).toBe(byteTokenCount(concisePrompt.slice(0, shared)));
    expect(back.usage.cachedInputTokens).toBe(byteTokenCount(concisePrompt.slice(0, shared)));
  });

  it('gives token probabilities with a P(true) strictly between 0 and 1 at the verdict', async () => {
    const yes = await trueJudge.complete(verdictRequest('mentions water', { logprobs: { top: 5 } }), { signal: signal() });
    const no = await falseJudge.complete(verdictRequest('mentions water', { logprobs: { top: 5 } }), { signal: signal() });
    for (const reply of [yes, no]) {
      expect(reply.tokenProbabilities?.map((entry) => entry.token).join('')).toBe(reply.text);
      for (const entry of reply.tokenProbabilities ?? []) {
        expect(entry.logprob).toBeLessThanOrEqual(0);
        expect(entry.top.length).toBeGreaterThan(0);
        expect(entry.top.length).toBeLessThanOrEqual(5);
        expect(entry.top[0].logprob).toBeGreaterThanOrEqual(entry.top[entry.top.length - 1].logprob);
      }
    }
    const probabilityYes = probabilityOfTrue(yes.tokenProbabilities ?? []);
    const probabilityNo = probabilityOfTrue(no.tokenProbabilities ?? []);
    expect(probabilityYes).toBeGreaterThan(0.5);
    expect(probabilityYes).toBeLessThan(1);
    expect(probabilityNo).toBeGreaterThan(0);
    expect(probabilityNo).toBeLessThan(0.5);
  });

  it('reports the same distribution whatever the sampling temperature', async () => {
    // A number field takes the whole-reply grammar: sampled tokens report untempered probabilities.
    const wholeReply = {
      name: 'verdict',
      schema: { type: 'object', properties: { explanation: { type: 'string' }, criteria_met: { type: 'boolean' }, confidence: { type: 'number' } }, required: ['explanation', 'criteria_met', 'confidence'] },
    };
    const greedy = await trueJudge.complete(verdictRequest('is kind', { output: wholeReply, logprobs: { top: 3 } }), { signal: signal() });
    const cool = await trueJudge.complete(verdictRequest('is kind', { output: wholeReply, logprobs: { top: 3 }, temperature: 0.5, seed: 3 }), { signal: signal() });
    const hot = await trueJudge.complete(verdictRequest('is kind', { output: wholeReply, logprobs: { top: 3 }, temperature: 2, seed: 9 }), { signal: signal() });
    // Same sampled path up to the verdict, so its position sees the same context in all three.
    const untilVerdict = (text: string) => text.slice(0, text.indexOf('criteria_met'));
    expect(untilVerdict(cool.text)).toBe(untilVerdict(greedy.text));
    expect(untilVerdict(hot.text)).toBe(untilVerdict(greedy.text));
    const reference = probabilityOfTrue(greedy.tokenProbabilities ?? []);
    expect(probabilityOfTrue(cool.tokenProbabilities ?? [])).toBeCloseTo(reference, 4);
    expect(probabilityOfTrue(hot.tokenProbabilities ?? [])).toBeCloseTo(reference, 4);
    // Value by value, a boolean's probability is read from the untempered logits whatever the temperature.
    const verdictOnly = { name: 'verdict', schema: { type: 'object', properties: { criteria_met: { type: 'boolean' } }, required: ['criteria_met'] } };
    const atZero = await trueJudge.complete(verdictRequest('is kind', { output: verdictOnly, logprobs: { top: 3 } }), { signal: signal() });
    const atTwo = await trueJudge.complete(verdictRequest('is kind', { output: verdictOnly, logprobs: { top: 3 }, temperature: 2, seed: 9 }), { signal: signal() });
    expect(probabilityOfTrue(atTwo.tokenProbabilities ?? [])).toBeCloseTo(probabilityOfTrue(atZero.tokenProbabilities ?? []), 6);
  });

  it('picks the same verdict whether or not it reads the whole distribution', async () => {
    const verdictOnly = { name: 'verdict', schema: { type: 'object', properties: { criteria_met: { type: 'boolean' } }, required: ['criteria_met'] } };
    const criteria = ['is kind', 'mentions water', 'is short', 'cites a source'];
    for (const judge of [trueJudge, falseJudge]) {
      for (const criterion of criteria) {
        const read = await judge.complete(verdictRequest(criterion, { output: verdictOnly, logprobs: { top: 2 } }), { signal: signal() });
        const sampled = await judge.complete(verdictRequest(criterion, { output: verdictOnly }), { signal: signal() });
        expect(sampled.text).toBe(read.text);
        expect(sampled.tokenProbabilities).toBeUndefined();
      }
    }
  });

  it('samples a boolean from its tempered distribution at a temperature, and greedily at 0', async () => {
    const verdictOnly = { name: 'verdict', schema: { type: 'object', properties: { criteria_met: { type: 'boolean' } }, required: ['criteria_met'] } };
    const greedy = await Promise.all([1, 2, 3, 4].map((seed) => falseJudge.complete(verdictRequest('is kind', { output: verdictOnly, seed }), { signal: signal() })));
    expect(new Set(greedy.map((reply) => reply.text))).toEqual(new Set(['{"criteria_met": false}']));
    // At a high temperature the rigged model's minority answer turns up among enough seeded draws.
    const seeds = Array.from({ length: 40 }, (_, index) => index + 1);
    const hot = [];
    for (const seed of seeds) hot.push((await falseJudge.complete(verdictRequest('is kind', { output: verdictOnly, temperature: 2, seed }), { signal: signal() })).text);
    expect(new Set(hot)).toEqual(new Set(['{"criteria_met": false}', '{"criteria_met": true}']));
  });

  it('honours the seed at a temperature', async () => {
    const texts = async (seed: number) => (await trueJudge.complete(verdictRequest('is kind', { temperature: 1.5, seed }), { signal: signal() })).text;
    const seeds = [1, 2, 3, 4, 5, 6, 7, 8];
    const first = await Promise.all(seeds.map(texts));
    const second = await Promise.all(seeds.map(texts));
    expect(second).toEqual(first);
    expect(new Set(first).size).toBeGreaterThan(1);
    // Without a seed, calls made within the same second still draw differently.
    const unseeded = await Promise.all(seeds.map(async () => (await trueJudge.complete(verdictRequest('is kind', { temperature: 1.5 }), { signal: signal() })).text));
    expect(new Set(unseeded).size).toBeGreaterThan(1);
  });

  it('stops at maxTokens without an output schema', async () => {
    const reply = await trueJudge.complete({ messages: gradingMessages('anything'), maxTokens: 7, temperature: 0 }, { signal: signal() });
    expect(reply.finishReason).toBe('length');
    expect(reply.usage.outputTokens).toBe(7);
    expect(reply.text).toHaveLength(7);
    expect(reply.tokenProbabilities).toBeUndefined();
  });

  it('refuses a prompt that does not fit instead of shifting the context', async () => {
    const longCriterion = 'must be thorough '.repeat(40);
    const overflow = trueJudge.complete(verdictRequest(longCriterion), { signal: signal() });
    await expect(overflow).rejects.toSatisfy((error) => RubricateError.isInstance(error) && error.code === 'JUDGE_CONTEXT_OVERFLOW');
    // Fits alone, but not with the reply budget.
    const tight = trueJudge.complete(verdictRequest('short', { maxTokens: trueJudge.contextSize }), { signal: signal() });
    await expect(tight).rejects.toSatisfy((error) => RubricateError.isInstance(error) && error.code === 'JUDGE_CONTEXT_OVERFLOW' && /does not fit/.test(error.message));
    const after = await trueJudge.complete(verdictRequest('short'), { signal: signal() });
    expect(parseVerdict(after).criteria_met).toBe(true);
  });

  it('turns an abort into a JUDGE_TIMEOUT, also while waiting for a sequence', async () => {
    await expect(falseJudge.complete(verdictRequest('x'), { signal: AbortSignal.abort() })).rejects.toSatisfy(
      (error) => RubricateError.isInstance(error) && error.code === 'JUDGE_TIMEOUT',
    );
    const controller = new AbortController();
    const running = falseJudge.complete(verdictRequest('first'), { signal: signal() });
    const queued = falseJudge.complete(verdictRequest('second'), { signal: controller.signal });
    controller.abort(new RubricateError('DEADLINE_EXCEEDED', 'item deadline'));
    await expect(queued).rejects.toSatisfy((error) => RubricateError.isInstance(error) && error.code === 'DEADLINE_EXCEEDED');
    expect(parseVerdict(await running).criteria_met).toBe(false);
  });

  it('stops a running generation on abort and leaves the sequence usable', async () => {
    const controller = new AbortController();
    // Free text with no schema runs until maxTokens: hundreds of decode steps, far longer than the delay.
    const running = falseJudge.complete({ messages: gradingMessages('long'), maxTokens: 350, temperature: 0 }, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('stop now')), 20);
    await expect(running).rejects.toSatisfy((error) => RubricateError.isInstance(error) && error.code === 'JUDGE_TIMEOUT' && /stop now/.test(error.message));
    const fresh = await falseJudge.complete(verdictRequest('long'), { signal: signal() });
    expect(parseVerdict(fresh).criteria_met).toBe(false);
  });

  it('answers a verdict-only schema with one generated token, following the rigging', async () => {
    const verdictOnly = { name: 'verdict', schema: { type: 'object', properties: { criteria_met: { type: 'boolean' } }, required: ['criteria_met'], additionalProperties: false } };
    const yes = await trueJudge.complete(verdictRequest('mentions water', { output: verdictOnly, logprobs: { top: 5 } }), { signal: signal() });
    const no = await falseJudge.complete(verdictRequest('mentions water', { output: verdictOnly, logprobs: { top: 5 } }), { signal: signal() });
    expect(yes.text).toBe('{"criteria_met": true}');
    expect(no.text).toBe('{"criteria_met": false}');
    for (const reply of [yes, no]) {
      expect(reply.usage.outputTokens).toBe(1);
      expect(reply.finishReason).toBe('stop');
      expect(reply.tokenProbabilities?.map((entry) => entry.token).join('')).toBe(reply.text);
    }
    // The probabilities are the model's at the verdict: the rigged letter carries most of the mass.
    expect(probabilityOfTrue(yes.tokenProbabilities ?? [])).toBeGreaterThan(0.5);
    expect(probabilityOfTrue(no.tokenProbabilities ?? [])).toBeLessThan(0.5);
    // The same verdict as the full grammar-constrained reply gives.
    expect(parseVerdict(await trueJudge.complete(verdictRequest('mentions water'), { signal: signal() })).criteria_met).toBe(true);
  });

  it('reuses no prefix when asked not to', async () => {
    const model = path.join(directory, 'false', 'tiny.gguf');
    const judge = await createLlamaCppJudge({ model, threads: 1, contextSize: 512, reusePrefix: false });
    try {
      await judge.complete(verdictRequest('is concise'), { signal: signal() });
      const again = await judge.complete(verdictRequest('is concise'), { signal: signal() });
      expect(again.usage.cachedInputTokens).toBe(0);
      expect(again.usage.inputTokens).toBe(byteTokenCount(judge.renderPrompt(gradingMessages('is concise'))) + forcedVerdictText.length);
    } finally {
      await judge.close();
    }
  });

  it('rejects bad parameters as a refused request', async () => {
    await expect(trueJudge.complete(verdictRequest('x', { maxTokens: 0 }), { signal: signal() })).rejects.toSatisfy(
      (error) => RubricateError.isInstance(error) && error.code === 'JUDGE_REQUEST_REJECTED',
    );
  });
});

describe('llama.cpp judge set-up errors', () => {
  it('names a missing model file', async () => {
    await expect(createLlamaCppJudge({ model: path.join(os.tmpdir(), 'rubricate-no-such-model.gguf'), threads: 1 })).rejects.toSatisfy(
      (error) => RubricateError.isInstance(error) && error.code === 'JUDGE_UNAVAILABLE' && /no GGUF model file/.test(error.message),
    );
  });

  test('refuses a closed judge', async ({ tempDir }) => {
    const judge = await createLlamaCppJudge({ model: await writeTinyGguf({ path: path.join(tempDir, 'tiny.gguf') }), threads: 1, contextSize: 256 });
    await judge.close();
    await judge.close();
    await expect(judge.complete(verdictRequest('x'), { signal: signal() })).rejects.toSatisfy((error) => RubricateError.isInstance(error) && error.code === 'JUDGE_UNAVAILABLE');
  });
});

describe('the default thread count', () => {
  it('uses the math cores the load average leaves free, and at least one', () => {
    expect(defaultLocalThreads(2, 0.1)).toBe(2);
    expect(defaultLocalThreads(2, 1.2)).toBe(1);
    expect(defaultLocalThreads(2, 7)).toBe(1);
    expect(defaultLocalThreads(8, 2.5)).toBe(6);
    expect(defaultLocalThreads(4, Number.NaN)).toBe(4);
  });
});

describe('the default context per sequence', () => {
  it('is the trained context up to 8192 for one sequence, and two such contexts shared out, at least 4096 each, for several', () => {
    expect(defaultContextSize(32_768, 1)).toBe(8192);
    expect(defaultContextSize(2048, 1)).toBe(2048);
    expect(defaultContextSize(0, 1)).toBe(8192);
    expect(defaultContextSize(32_768, 2)).toBe(8192);
    expect(defaultContextSize(32_768, 4)).toBe(4096);
    expect(defaultContextSize(32_768, 8)).toBe(4096);
    expect(defaultContextSize(2048, 4)).toBe(2048);
  });
});
