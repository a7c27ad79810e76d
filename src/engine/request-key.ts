import { createHash } from 'node:crypto';
import type { JudgeProvenance, JudgeRequest } from '../judges/types.js';

/**
 * Cache key of a judge call: sha256 over the judge's identity and model, the template
 * version, the exact messages, the output schema and every sampling parameter. Hashed
 * piecewise (no canonical JSON of the whole request): it runs once per call.
 */
export function requestKey(judge: JudgeProvenance, templateVersion: string, request: JudgeRequest, sample = 0): string {
  const hash = createHash('sha256');
  hash.update(`rubricate-request/1\u0000${judge.id}\u0000${judge.model}\u0000${templateVersion}\u0000`);
  hash.update(
    JSON.stringify([
      request.temperature ?? null,
      request.maxTokens ?? null,
      request.seed ?? null,
      request.logprobs?.top ?? null,
      request.output?.name ?? null,
      sample,
    ]),
  );
  if (request.output) hash.update(JSON.stringify(request.output.schema));
  for (const message of request.messages) {
    hash.update(`\u0000${message.role}\u0000`);
    hash.update(message.content);
  }
  return hash.digest('hex');
}
