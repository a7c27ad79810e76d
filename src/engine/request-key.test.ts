import { describe, expect, it } from 'vitest';
import type { JudgeRequest } from '../judges/types.js';
import { endpointIdentity, requestKey } from './request-key.js';

const request: JudgeRequest = { messages: [{ role: 'system', content: 'You grade.' }, { role: 'user', content: 'Is 38°C a fever?' }], temperature: 0, maxTokens: 64 };
const keyAt = (baseUrl: string | undefined, cacheNamespace?: string) =>
  requestKey({ id: 'openai:gpt-4.1', model: 'gpt-4.1', ...(baseUrl ? { baseUrl } : {}), ...(cacheNamespace !== undefined ? { cacheNamespace } : {}) }, 'per-criterion/v1', request);

describe('reply cache keys and the endpoint', () => {
  it("keeps the official OpenAI host's keys as they were before endpoints were keyed", () => {
    // The key this request had before the endpoint became part of keys (computed with that code): caches of OpenAI users stay valid.
    expect(keyAt('https://api.openai.com/v1')).toBe('5745495f22a8fabb40ab7cb0d20ab9dda2ef61176788d6d8e3c23333b6988e10');
    expect(keyAt(undefined)).toBe(keyAt('https://api.openai.com/v1'));
  });

  it("keys the conditions a conditional criterion is asked under, and leaves other keys as they were", () => {
    const judge = { id: 'openai:gpt-4.1', model: 'gpt-4.1' };
    expect(requestKey(judge, 'per-criterion/v1', request, 0, undefined, undefined)).toBe('5745495f22a8fabb40ab7cb0d20ab9dda2ef61176788d6d8e3c23333b6988e10');
    const underTrue = requestKey(judge, 'per-criterion/v1', request, 0, undefined, JSON.stringify([[{ criterion: 'c1', verdict: true }]]));
    const underFalse = requestKey(judge, 'per-criterion/v1', request, 0, undefined, JSON.stringify([[{ criterion: 'c1', verdict: false }]]));
    expect(underTrue).not.toBe(keyAt(undefined));
    expect(underTrue).not.toBe(underFalse);
    expect(requestKey(judge, 'per-criterion/v1', request, 0, 'material', JSON.stringify([[{ criterion: 'c1', verdict: true }]]))).not.toBe(requestKey(judge, 'per-criterion/v1', request, 0, 'material'));
  });

  it('gives two servers of the same model name different keys', () => {
    expect(keyAt('http://localhost:8000/v1')).not.toBe(keyAt('http://localhost:8001/v1'));
    expect(keyAt('http://vllm-a:8000/v1')).not.toBe(keyAt('http://vllm-b:8000/v1'));
    expect(keyAt('http://vllm-a:8000/v1')).not.toBe(keyAt('http://vllm-a:8000/other/v1'));
    expect(keyAt('http://localhost:8000/v1')).not.toBe(keyAt('https://api.openai.com/v1'));
  });

  it('keys an endpoint by host and path only: credentials, query and a trailing slash do not change it', () => {
    const plain = keyAt('https://proxy.example.com/v1');
    expect(keyAt('https://user:secret@proxy.example.com/v1/')).toBe(plain);
    expect(keyAt('https://PROXY.example.com/v1?api-version=2024-10-21')).toBe(plain);
    expect(endpointIdentity({ id: 'x', model: 'm', baseUrl: 'https://user:secret@proxy.example.com/v1/' })).toBe('proxy.example.com/v1');
  });

  it('keys a pool by its set of endpoints, in any order', () => {
    expect(keyAt('http://vllm-1:8000/v1,http://vllm-2:8000/v1')).toBe(keyAt('http://vllm-2:8000/v1,http://vllm-1:8000/v1'));
    expect(keyAt('http://vllm-1:8000/v1,http://vllm-2:8000/v1')).not.toBe(keyAt('http://vllm-1:8000/v1'));
  });

  it('shares keys across endpoints given the same cache namespace, and only then', () => {
    expect(keyAt('http://localhost:8000/v1', 'qwen3-32b')).toBe(keyAt('http://vllm-b:9000/v1', 'qwen3-32b'));
    expect(keyAt('https://api.openai.com/v1', 'qwen3-32b')).toBe(keyAt('http://vllm-b:9000/v1', 'qwen3-32b'));
    expect(keyAt('http://localhost:8000/v1', 'qwen3-32b')).not.toBe(keyAt('http://localhost:8000/v1', 'other'));
    expect(keyAt('http://localhost:8000/v1', 'qwen3-32b')).not.toBe(keyAt('http://localhost:8000/v1'));
  });

  it('leaves local model files out of the key (their path is not an endpoint)', () => {
    expect(endpointIdentity({ id: 'gguf:/models/q.gguf', model: 'q', baseUrl: '/models/q.gguf' })).toBeUndefined();
  });
});
