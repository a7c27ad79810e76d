import type { JudgeProvenance, JudgeRequest } from '../judges/types.js';
import { digestOf, sha256Hex } from '../util/hash.js';

/**
 * Cache key of a judge call: sha256 over the judge's identity and model, the template
 * version, the exact messages (or the task's key material, which determines them), the
 * output schema and every sampling parameter. It runs once per task, so it is one string
 * and one one-shot hash (no canonical JSON of the whole request, no hash object).
 */
export function requestKey(judge: JudgeProvenance, templateVersion: string, request: JudgeRequest, sample = 0, keyMaterial?: string, conditions?: string): string {
  let material = `rubricate-request/1\u0000${judge.id}\u0000${judge.model}\u0000${templateVersion}\u0000${request.temperature ?? null},${request.maxTokens ?? null},${request.seed ?? null},${request.logprobs?.top ?? null},${JSON.stringify(request.output?.name ?? null)},${sample}`;
  // Only the model under test is sampled with top_p: judges' keys stay as they were.
  if (request.topP !== undefined) material += `\u0000top_p\u0000${request.topP}`;
  if (request.output) material += schemaJson(request.output.schema);
  // Settings that change replies (e.g. thinking turned off through the extra body) are part of the key.
  if (judge.variant !== undefined) material += `\u0000variant\u0000${judge.variant}`;
  // A replayed judge answers by item and criterion, not by text: two items of the same text are two keys.
  if (judge.replayed && request.subject) material += `\u0000subject\u0000${JSON.stringify(request.subject)}`;
  // Two endpoints serving "the same" model name may not serve the same model: their replies are not shared.
  const endpoint = endpointIdentity(judge);
  if (endpoint !== undefined) material += `\u0000endpoint\u0000${endpoint}`;
  // Conditional criteria: the condition a verdict was asked under is part of its key (absent: keys as before conditions existed).
  if (conditions !== undefined) material += `\u0000when\u0000${conditions}`;
  if (keyMaterial !== undefined) return sha256Hex(`${material}\u0000material\u0000${keyMaterial}`);
  for (const message of request.messages) {
    // System prompts repeat on every call: hash their digest, computed once, not their text.
    material += `\u0000${message.role}\u0000${message.role === 'system' ? digestOf(message.content) : message.content}`;
  }
  return sha256Hex(material);
}

/** Hosts whose keys never carried an endpoint: the official APIs (their judge id already names the provider). */
const officialHosts = new Set(['api.openai.com', 'api.anthropic.com', 'generativelanguage.googleapis.com']);

const endpointMemo = new WeakMap<JudgeProvenance, { baseUrl: string | undefined; namespace: string | undefined; identity: string | undefined }>();

/**
 * The endpoint part of a cache key: the namespace when one is given; else host and path of each
 * HTTP endpoint that is not an official API (no credentials, no query), sorted for a pool; else none.
 */
export function endpointIdentity(judge: JudgeProvenance): string | undefined {
  const memo = endpointMemo.get(judge);
  if (memo && memo.baseUrl === judge.baseUrl && memo.namespace === judge.cacheNamespace) return memo.identity;
  let identity: string | undefined;
  if (judge.cacheNamespace !== undefined) identity = `namespace:${judge.cacheNamespace}`;
  else if (judge.baseUrl) {
    const hosts: string[] = [];
    for (const part of judge.baseUrl.split(',')) {
      let url: URL;
      try {
        url = new URL(part.trim());
      } catch {
        continue;
      }
      if ((url.protocol !== 'http:' && url.protocol !== 'https:') || officialHosts.has(url.hostname)) continue;
      hosts.push(`${url.host}${url.pathname.replace(/\/+$/, '')}`);
    }
    if (hosts.length > 0) identity = [...new Set(hosts)].sort().join(',');
  }
  endpointMemo.set(judge, { baseUrl: judge.baseUrl, namespace: judge.cacheNamespace, identity });
  return identity;
}

const schemaJsonMemo = new WeakMap<object, string>();

function schemaJson(schema: Record<string, unknown>): string {
  let json = schemaJsonMemo.get(schema);
  if (json === undefined) schemaJsonMemo.set(schema, (json = JSON.stringify(schema)));
  return json;
}
