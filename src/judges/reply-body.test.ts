/**
 * A judge reply has a size bound: an oversized reply (declared, or streamed without end) fails
 * with JUDGE_REPLY_TOO_LARGE, is retried, then reported; the connection is dropped instead of
 * drained, so memory stays at the bound per call in flight.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, vi } from 'vitest';
import { GradingEngine } from '../engine/engine.js';
import { createPerCriterionStrategy } from '../grading/strategies.js';
import { test } from '../testing/vitest-fixtures.js';
import { createOpenAICompatibleJudge } from './openai/openai-judge.js';

const item = {
  id: 'i',
  prompt: [{ role: 'user' as const, content: 'q' }],
  response: 'r',
  rubric: { id: 'r', criteria: [{ id: 'c', text: 'Mentions r', points: 1, tags: [], kind: 'principle' as const }] },
};

/** A server that streams an endless chunked body and reports when the client hangs up. */
async function endlessServer(): Promise<{ baseUrl: string; bytesSent: () => number; hangUps: () => number; close: () => Promise<void> }> {
  let sent = 0;
  let hangUps = 0;
  const chunk = Buffer.alloc(64 * 1024, 'a');
  const server = http.createServer((incoming, outgoing) => {
    incoming.resume();
    outgoing.writeHead(200, { 'content-type': 'application/json' });
    outgoing.write('{"choices":[{"message":{"content":"');
    const pump = () => {
      while (!outgoing.destroyed && outgoing.write(chunk)) sent += chunk.length;
      if (!outgoing.destroyed) outgoing.once('drain', pump);
    };
    outgoing.on('close', () => (hangUps += 1));
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    bytesSent: () => sent,
    hangUps: () => hangUps,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('judge reply size bound', () => {
  test('an endless streamed reply is cut at the bound, retried, then reported as JUDGE_REPLY_TOO_LARGE', async ({ closeAfter }) => {
    const server = closeAfter(await endlessServer());
    const judge = closeAfter(createOpenAICompatibleJudge({ model: 'm', baseUrl: server.baseUrl, maxReplyBytes: 1024 * 1024 }));
    const engine = new GradingEngine({ judge, strategy: createPerCriterionStrategy({ sampling: { temperature: 0, maxTokens: 64 } }), calls: { maxAttempts: 2, retryBaseDelayMs: 1 } });
    const graded = await engine.gradeItem(item);
    expect(graded.status).toBe('error');
    expect(graded.criteria[0].error).toMatchObject({ code: 'JUDGE_REPLY_TOO_LARGE', message: expect.stringContaining('larger than 1048576 bytes') });
    expect(graded.usage.calls).toBe(2);
    // The client hung up on both replies instead of reading them to the end.
    await vi.waitFor(() => expect(server.hangUps()).toBe(2));
  });

  test('a declared Content-Length over the bound fails before the body is read; a reply under it is read as usual', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge(
      (request) => (request.index === 0 ? { rawBody: JSON.stringify({ choices: [{ message: { content: 'x'.repeat(300_000) } }] }) } : { content: { explanation: 'ok', criteria_met: true } }),
      { model: 'm', maxReplyBytes: 100_000 },
    );
    const request = { messages: [{ role: 'user' as const, content: 'hi' }] };
    await expect(judge.complete(request, { signal: new AbortController().signal })).rejects.toMatchObject({ code: 'JUDGE_REPLY_TOO_LARGE', retryable: true });
    await expect(judge.complete(request, { signal: new AbortController().signal })).resolves.toMatchObject({ text: '{"explanation":"ok","criteria_met":true}' });
  });
});
