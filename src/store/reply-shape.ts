/**
 * What a stored entry must look like to be used as a judge reply. Anything else (a number,
 * `{}`, a reply without text or usage) is a damaged entry and reads as absent, so the call
 * is simply made again instead of crashing the run.
 */
import type { JudgeReply } from '../judges/types.js';
import { safeParseJson } from '../util/json.js';

function isCount(value: unknown): boolean {
  return value === undefined || (typeof value === 'number' && Number.isFinite(value) && value >= 0);
}

export function asJudgeReply(value: unknown): JudgeReply | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const reply = value as Record<string, unknown>;
  if (typeof reply.text !== 'string') return undefined;
  const usage = reply.usage;
  if (usage === null || typeof usage !== 'object' || Array.isArray(usage)) return undefined;
  const counts = usage as Record<string, unknown>;
  if (!isCount(counts.inputTokens) || !isCount(counts.outputTokens) || !isCount(counts.cachedInputTokens)) return undefined;
  if (reply.finishReason !== undefined && typeof reply.finishReason !== 'string') return undefined;
  if (reply.tokenProbabilities !== undefined && !Array.isArray(reply.tokenProbabilities)) return undefined;
  return value as JudgeReply;
}

/** Parses a stored entry; undefined when it is not JSON or not a reply. */
export function readStoredReply(text: string): JudgeReply | undefined {
  const parsed = safeParseJson(text);
  return parsed.ok ? asJudgeReply(parsed.value) : undefined;
}
