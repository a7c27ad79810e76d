/**
 * The local judge's prefix reuse, counted through the real pipeline: graded by a Grader with
 * per-criterion calls, an item's shared context (instructions, conversation, response) is
 * evaluated once, and each criterion after the first evaluates only its own tail. The expected
 * counts come from the prompts' token ids, so the test counts tokens and never times anything.
 */
import path from 'node:path';
import { afterAll, describe, expect } from 'vitest';
import { createLlamaCppJudge, type LlamaCppJudge } from '../judges/llamacpp/llamacpp-judge.js';
import type { ChatMessage, Judge, JudgeReply } from '../judges/types.js';
import type { ImportRecord } from '../rubric/records.js';
import { normalizeItem } from '../rubric/normalize.js';
import type { Item } from '../rubric/schema.js';
import { writeTinyGguf } from '../testing/tiny-gguf.js';
import { test } from '../testing/vitest-fixtures.js';
import { Grader } from './grader.js';
import { hangGuard } from '../testing/hang-guard.js';

/** One judge call as the judge saw and answered it. */
interface RecordedCall {
  item: string;
  tokens: readonly number[];
  usage: JudgeReply['usage'];
}

// Criterion texts start differently, so what two criteria of an item share is the item's context.
const items: Item[] = [
  { id: 'fruit', response: 'An apple, which is a fruit.', criteria: ['Names a fruit', 'Is polite', 'Uses one sentence'] },
  { id: 'greeting', response: 'Hello there! Nice to meet you.', criteria: ['Greets the user', 'Mentions the weather', 'Asks a question', 'Keeps it short'] },
  { id: 'sum', response: 'Two plus two is four.', criteria: ['Gives the right sum', 'Shows the working', 'Answers in words'] },
].map(({ id, response, criteria }) =>
  normalizeItem({ id, prompt: `Question for ${id}.`, response, rubric: { criteria: criteria.map((text, index) => ({ id: `c${index}`, text, points: 1 })) } }),
);

async function* records(): AsyncGenerator<ImportRecord> {
  for (const [index, item] of items.entries()) yield { kind: 'item', item, line: index + 1 };
}

function commonPrefixLength(left: readonly number[], right: readonly number[]): number {
  let length = 0;
  while (length < left.length && length < right.length && left[length] === right[length]) length += 1;
  return length;
}

/** The item a request grades: the one whose response its user message holds (the responses differ). */
function itemOf(messages: ChatMessage[]): string {
  const text = messages.map((message) => message.content).join('\n');
  const matching = items.filter((item) => text.includes(item.response));
  expect(matching).toHaveLength(1);
  return matching[0].id;
}

/** Grades the items through a Grader (the local plan: per criterion, one call at a time), recording each call. */
async function gradeRecording(judge: LlamaCppJudge): Promise<RecordedCall[]> {
  const calls: RecordedCall[] = [];
  const recording: Judge = {
    ...judge,
    complete: async (request, options) => {
      const reply = await judge.complete(request, options);
      calls.push({ item: itemOf(request.messages), tokens: judge.promptTokenIds(request.messages), usage: reply.usage });
      return reply;
    },
  };
  const grader = new Grader({ judge: recording, plan: { mode: 'per-criterion', sampling: { maxTokens: 96 } }, calls: { concurrency: 1 } });
  for await (const result of grader.gradeStream(records())) expect(result.status, JSON.stringify(result)).toBe('ok');
  return calls;
}

/** Each item's calls, in the order they ran; an item's calls must run one after another for its prefix to stay in the sequence. */
function callsByItem(calls: RecordedCall[]): RecordedCall[][] {
  const order = calls.map((call) => call.item).filter((item, index, all) => index === 0 || all[index - 1] !== item);
  expect(order).toEqual(items.map((item) => item.id));
  return items.map((item) => calls.filter((call) => call.item === item.id));
}

/** The longest token prefix every one of an item's prompts starts with: the item's shared context. */
function sharedPrefixLength(itemCalls: RecordedCall[]): number {
  return itemCalls.slice(1).reduce((length, call) => Math.min(length, commonPrefixLength(itemCalls[0].tokens, call.tokens)), itemCalls[0].tokens.length);
}

/** Tokens a call evaluated: its input less what the sequence's KV cache already held. */
const evaluated = (call: RecordedCall) => call.usage.inputTokens - call.usage.cachedInputTokens;
const sum = (calls: RecordedCall[], count: (call: RecordedCall) => number) => calls.reduce((total, call) => total + count(call), 0);

describe('prefix reuse of the local judge through the Grader (tiny generated model, counted tokens)', () => {
  let reusing: LlamaCppJudge;
  let naive: LlamaCppJudge;

  // One sequence each (the judge's default): every call follows the previous one in the same KV cache.
  test.beforeAll(async ({ fileTempDir }) => {
    const model = await writeTinyGguf({ path: path.join(fileTempDir, 'tiny.gguf'), bias: 'true' });
    reusing = await createLlamaCppJudge({ model, threads: 1 });
    naive = await createLlamaCppJudge({ model, threads: 1, reusePrefix: false, id: 'gguf:tiny-no-reuse' });
  });

  afterAll(async () => {
    await reusing?.close();
    await naive?.close();
  });

  test("evaluates each item's shared context once, then each criterion's own tail", async () => {
    const calls = await gradeRecording(reusing);
    expect(calls).toHaveLength(10);
    let previous: RecordedCall | undefined;
    for (const itemCalls of callsByItem(calls)) {
      const shared = sharedPrefixLength(itemCalls);
      // What the item's first call kept of the previous item's prompt (the instructions, which come first).
      const carriedIn = previous ? commonPrefixLength(previous.tokens, itemCalls[0].tokens) : 0;
      // The shared part holds the item's own text (it goes past what items share), and it is most of every prompt.
      expect(shared).toBeGreaterThan(carriedIn);
      for (const call of itemCalls) expect(call.tokens.length - shared).toBeLessThan(shared);

      // Beyond the shared context, consecutive criteria may also share the first characters of their random block markers.
      let extraShared = 0;
      for (let index = 1; index < itemCalls.length; index += 1) extraShared += commonPrefixLength(itemCalls[index - 1].tokens, itemCalls[index].tokens) - shared;

      const ownTails = sum(itemCalls, (call) => call.usage.inputTokens - shared);
      expect(sum(itemCalls, evaluated)).toBe(shared + ownTails - carriedIn - extraShared);

      // Call by call, the judge's rule exactly: the prefix shared with the sequence's previous prompt is kept,
      // but never the whole prompt (at least one token is evaluated to read the next token's logits).
      for (const call of itemCalls) {
        // Each prompt is counted whole in its input (with any reply text the judge forces, evaluated as input too);
        // a prompt never starts with the whole previous one, so what the sequence kept is a prefix of both prompts.
        expect(call.usage.inputTokens).toBeGreaterThanOrEqual(call.tokens.length);
        const kept = previous ? commonPrefixLength(previous.tokens, call.tokens) : 0;
        if (previous) expect(kept).toBeLessThan(previous.tokens.length);
        expect(call.usage.cachedInputTokens).toBe(Math.min(kept, call.tokens.length - 1));
        previous = call;
      }
    }
  }, hangGuard(120_000));

  test('with reusePrefix: false evaluates every prompt in full: the shared context once per criterion', async () => {
    const calls = await gradeRecording(naive);
    expect(calls).toHaveLength(10);
    for (const itemCalls of callsByItem(calls)) {
      const shared = sharedPrefixLength(itemCalls);
      const ownTails = sum(itemCalls, (call) => call.usage.inputTokens - shared);
      for (const call of itemCalls) expect(call.usage.cachedInputTokens).toBe(0);
      expect(sum(itemCalls, evaluated)).toBe(itemCalls.length * shared + ownTails);
    }
  }, hangGuard(120_000));
});
