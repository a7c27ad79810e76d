import { describe, expect, it } from 'vitest';
import { emptyUsage } from '../engine/usage.js';
import { publicError, publicMessage, publicResult } from './public-errors.js';

describe('public errors', () => {
  it('removes URLs (with credentials), host:port, paths and stack lines from messages', () => {
    const message = 'cannot reach the judge at http://user:secret@10.1.2.3:9000/v1/chat/completions: ECONNREFUSED 10.1.2.3:9000\n    at TCPConnectWrap.afterConnect (node:net:1555:16)';
    const cleaned = publicMessage(message);
    expect(cleaned).toBe('cannot reach the judge at <judge endpoint>: ECONNREFUSED <judge endpoint>');
    expect(publicMessage('no GGUF model file at /home/me/models/x.gguf')).toBe('no GGUF model file at <path>');
    expect(publicMessage('connect ECONNREFUSED 127.0.0.1:9, then 10.0.0.5 and localhost:8080')).toBe('connect ECONNREFUSED <judge endpoint>, then <judge endpoint> and <judge endpoint>');
    expect(publicMessage('x'.repeat(400))).toHaveLength(301);
  });

  it('keeps the code and the field, drops other details (endpoint, status)', () => {
    expect(publicError({ code: 'JUDGE_SERVER_ERROR', message: 'judge server error 500 at https://judge.internal/v1', details: { endpoint: 'https://judge.internal/v1', status: 500 } })).toEqual({
      code: 'JUDGE_SERVER_ERROR',
      message: 'judge server error 500 at <judge endpoint>',
    });
    expect(publicError({ code: 'INPUT_INVALID', message: 'bad', details: { field: 'labels[2]' } })).toEqual({ code: 'INPUT_INVALID', message: 'bad', details: { field: 'labels[2]' } });
  });

  it('cleans the item error, criterion errors and vote errors of a result without touching the original', () => {
    const original = {
      id: 'a',
      reward: null,
      status: 'error' as const,
      usage: emptyUsage(),
      error: { code: 'JUDGE_CONNECTION' as const, message: 'cannot reach http://10.0.0.1:8000/v1', details: { endpoint: 'http://10.0.0.1:8000/v1' } },
      criteria: [
        { id: 'c', text: 't', points: 1, tags: [], kind: 'principle' as const, source: 'judge' as const, status: 'error' as const, met: null, error: { code: 'JUDGE_CONNECTION' as const, message: 'at http://10.0.0.1:8000/v1' }, votes: [{ judge: 'j', met: null, error: 'down at http://10.0.0.1:8000' }] },
      ],
    };
    const cleaned = publicResult(original);
    expect(JSON.stringify(cleaned)).not.toMatch(/10\.0\.0\.1|http:/);
    expect(cleaned.criteria[0].error?.code).toBe('JUDGE_CONNECTION');
    expect(original.error.message).toContain('http://10.0.0.1');
  });
});
