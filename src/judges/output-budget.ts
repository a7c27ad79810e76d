/**
 * A reply cut off by its output budget (`finishReason: length`) is asked again with a larger
 * budget, up to the model's published output limit; every call's tokens are counted. When the
 * reply is still cut off at that limit it is marked `atOutputLimit`, which the reader reports
 * as final instead of retrying. Used by the native judges (the OpenAI-compatible one does the
 * same with its capability profile).
 */
import type { JudgeReply, JudgeUsage } from './types.js';

const growth = 4;
const maximumSteps = 2;

function addUsage(total: JudgeUsage, part: JudgeUsage): JudgeUsage {
  const written = (total.cacheWriteInputTokens ?? 0) + (part.cacheWriteInputTokens ?? 0);
  return {
    inputTokens: total.inputTokens + part.inputTokens,
    outputTokens: total.outputTokens + part.outputTokens,
    cachedInputTokens: total.cachedInputTokens + part.cachedInputTokens,
    ...(written > 0 ? { cacheWriteInputTokens: written } : {}),
  };
}

/** Calls with `initial` tokens, then with up to 16× as many (never above `ceiling`) while the reply is cut off. */
export async function withGrowingBudget(initial: number, ceiling: number | undefined, call: (budget: number) => Promise<JudgeReply>): Promise<JudgeReply> {
  const limit = ceiling ?? initial * growth ** maximumSteps;
  let budget = ceiling === undefined ? initial : Math.min(initial, ceiling);
  let spent: JudgeUsage | undefined;
  for (let step = 0; ; step += 1) {
    const reply = await call(budget);
    spent = spent ? addUsage(spent, reply.usage) : reply.usage;
    if (reply.finishReason === 'length' && budget < limit && step < maximumSteps) {
      budget = Math.min(limit, budget * growth);
      continue;
    }
    if (reply.finishReason === 'length' && ceiling !== undefined && budget >= ceiling) reply.atOutputLimit = true;
    reply.usage = spent;
    return reply;
  }
}
