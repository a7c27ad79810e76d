import { afterEach, describe, expect, it } from 'vitest';
import { RubricateError } from '../errors.js';
import { clearRegisteredSecrets, redactDeep, redactedMarker, redactText, redactUrl, registerSecret } from './redact.js';

afterEach(() => clearRegisteredSecrets());

describe('redaction', () => {
  it('removes URL credentials and secret query values, keeping the rest of the URL', () => {
    expect(redactUrl('http://alice:hunter2pass@judge.internal:8080/v1')).toBe(`http://${redactedMarker}@judge.internal:8080/v1`);
    expect(redactUrl('https://judge.example/v1?api_key=abc123&model=x&sig=zz9&X-Amz-Signature=f00&token=t0k')).toBe(
      `https://judge.example/v1?api_key=${redactedMarker}&model=x&sig=${redactedMarker}&X-Amz-Signature=${redactedMarker}&token=${redactedMarker}`,
    );
    expect(redactUrl('https://judge.example/v1?password=pw&secret=s&access_token=a&key=k')).not.toMatch(/=pw|=s\b|=a\b|=k\b/);
  });

  it('returns the very same string when there is nothing to redact', () => {
    const clean = 'http://127.0.0.1:8080/v1';
    expect(redactUrl(clean)).toBe(clean);
    const text = 'the response mentions apples = good';
    expect(redactText(text)).toBe(text);
    const object = { endpoint: clean, nested: [{ status: 401 }] };
    expect(redactDeep(object)).toBe(object);
  });

  it('scrubs registered secrets, Bearer credentials and key-shaped strings anywhere in text', () => {
    registerSecret('my-judge-key-0123');
    expect(redactText('Incorrect API key provided: my-judge-key-0123. You can find your key at …')).toBe(`Incorrect API key provided: ${redactedMarker}. You can find your key at …`);
    expect(redactText('Authorization: Bearer abcdefgh.ijkl')).toBe(`Authorization: Bearer ${redactedMarker}`);
    expect(redactText('key sk-proj-AAAAAAAAAAAAAAAAAAAAAAAA leaked')).toBe(`key ${redactedMarker} leaked`);
    // Short values would match ordinary words: not registered.
    registerSecret('abc');
    expect(redactText('abc')).toBe('abc');
  });

  it('applies to every RubricateError message and detail', () => {
    registerSecret('s3cr3t-key-value');
    const error = new RubricateError('JUDGE_AUTH', 'refused s3cr3t-key-value at http://u:p4ss@h/v1', { endpoint: 'http://u:p4ss@h/v1/chat/completions', body: { echoed: 's3cr3t-key-value' } });
    const serialized = JSON.stringify(error.toJSON());
    expect(serialized).not.toContain('s3cr3t-key-value');
    expect(serialized).not.toContain('p4ss');
    expect(error.stack).not.toContain('s3cr3t-key-value');
  });
});
