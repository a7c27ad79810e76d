import { describe, expect, test } from 'vitest';
import { createJudge } from '../judges/registry.js';
import { endpointAllowed, endpointRefusal, ownEndpoints } from './endpoint-allow-list.js';

describe('endpointAllowed', () => {
  const allowed = ['https://api.openai.com/v1', 'http://10.0.0.5:8000/v1/'];

  test('the endpoint itself and paths below it, however the URL is spelled', () => {
    for (const endpoint of [
      'https://api.openai.com/v1',
      'https://api.openai.com/v1/',
      'https://API.OpenAI.com/v1',
      'https://api.openai.com:443/v1',
      'https://api.openai.com./v1',
      'https://api.openai.com/v1/chat/completions?x=1',
      'http://10.0.0.5:8000/v1',
      'http://10.0.0.5:8000/v1/../v1/models',
    ]) {
      expect(endpointAllowed(endpoint, allowed), endpoint).toBe(true);
    }
  });

  test('nothing that only looks like it: other hosts, ports, schemes, path prefixes, user info tricks', () => {
    for (const endpoint of [
      'https://api.openai.com.evil.example/v1',
      'https://api.openai.com@evil.example/v1',
      'https://api.openai.com:443@evil.example/v1',
      'https://evil.example/api.openai.com/v1',
      'https://evil.example/?https://api.openai.com/v1',
      'https://api.openai.com.:8443/v1',
      'http://api.openai.com/v1',
      'https://api.openai.com/v1evil',
      'https://api.openai.com/v2',
      'https://api.openai.com/v1/../v2',
      'https://api.openai.com/',
      'https://api.openai.com//evil.example/v1',
      'http://10.0.0.5:8001/v1',
      'http://10.0.0.5/v1',
      'ftp://api.openai.com/v1',
      'not a url',
    ]) {
      expect(endpointAllowed(endpoint, allowed), endpoint).toBe(false);
    }
  });

  test('an empty list allows nothing', () => {
    expect(endpointAllowed('https://api.openai.com/v1', [])).toBe(false);
  });
});

describe('the default allow-list: the endpoint the worker is configured for', () => {
  test("a run's base URL other than the worker's own is refused, naming it redacted; the worker's own passes", async () => {
    const environment = { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'worker-own-secret-key' };
    const named = await createJudge({ model: 'openai:m', endpoint: { baseUrl: 'http://user:hunter2pass@127.0.0.1:10/v1' } }, { environment });
    const own = await createJudge({ model: 'openai:m' }, { environment });
    const local = { ...own, provenance: { id: 'gguf:model.gguf', model: 'model.gguf' } };
    try {
      const allowed = await ownEndpoints([named, local], { environment });
      expect(allowed).toEqual(['http://127.0.0.1:9/v1']);
      const refusal = endpointRefusal([local, named], allowed);
      expect(refusal?.code).toBe('JUDGE_ENDPOINT_NOT_ALLOWED');
      expect(refusal?.message).toContain('http://[REDACTED]@127.0.0.1:10/v1');
      expect(refusal?.message).not.toContain('hunter2pass');
      expect(refusal?.details.endpoint).toBe('http://[REDACTED]@127.0.0.1:10/v1');
      expect(endpointRefusal([own, local], allowed)).toBeUndefined();
    } finally {
      await named.close?.();
      await own.close?.();
    }
  });
});
