import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAnthropicJudge } from '../judges/anthropic/anthropic-judge.js';
import { createJudge } from '../judges/registry.js';
import { createOpenAICompatibleJudge } from '../judges/openai/openai-judge.js';
import type { ChatMessage, JudgeReply, JudgeRequest } from '../judges/types.js';
import { startFakeAnthropic } from '../testing/fake-anthropic.js';
import { startFakeAnthropicBatch } from '../testing/fake-anthropic-batch.js';
import { binaryVerdict, startFakeJudge } from '../testing/fake-judge.js';
import { startFakeOpenAIBatch } from '../testing/fake-openai-batch.js';
import { createBatchJudge, type BatchEvent, type BatchJudgeOptions, type BodyBuildingJudge } from './batch-judge.js';
import type { BatchService } from './batch-service.js';
import { requestInputTokens, tokenizerFor } from './dry-run.js';
import { BatchLedger } from './ledger.js';
import { batchServiceFor } from './services.js';
import { openSqlite } from '../store/sqlite-driver.js';

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const verdictSchema = {
  name: 'record_verdict',
  schema: { type: 'object', properties: { explanation: { type: 'string' }, criteria_met: { type: 'boolean' } }, required: ['explanation', 'criteria_met'], additionalProperties: false },
};

function requestFor(index: number, words = 20): JudgeRequest {
  const filler = Array.from({ length: words }, (_, word) => `word${word}`).join(' ');
  return { messages: [{ role: 'user', content: `Question ${index}: is the answer right? ${filler}` }], output: verdictSchema, maxTokens: 200, temperature: 0 };
}

/** A folder removed after the test (once what was opened in it is closed). */
function ledgerDirectory(): string {
  const directory = mkdtempSync(join(tmpdir(), 'rubricate-ledger-'));
  closers.push(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}

function newLedger(): BatchLedger {
  const ledger = new BatchLedger(join(ledgerDirectory(), 'cache.sqlite'));
  closers.push(() => ledger.close());
  return ledger;
}

async function openAIFakes(options: Parameters<typeof startFakeOpenAIBatch>[0] extends infer O ? Omit<O, 'backendBaseUrl'> : never = {}) {
  const backend = await startFakeJudge(() => ({ content: binaryVerdict(true), usage: { prompt_tokens: 100, completion_tokens: 10 } }));
  const batches = await startFakeOpenAIBatch({ backendBaseUrl: backend.baseUrl, ...options });
  closers.push(() => backend.close(), () => batches.close());
  return { backend, batches };
}

function judgeWith(options: Omit<BatchJudgeOptions, 'pollIntervalMs' | 'gatherMs'>) {
  const judge = createBatchJudge({ pollIntervalMs: 5, gatherMs: 20, ...options });
  closers.push(() => judge.close());
  return judge;
}

const signal = new AbortController().signal;

async function settleAll(promises: Array<Promise<JudgeReply>>) {
  return Promise.allSettled(promises);
}

describe('batch judge: provider limits split the work', () => {
  it('splits by requests per batch', async () => {
    const { backend, batches } = await openAIFakes();
    const inner = createOpenAICompatibleJudge({ model: 'gpt-4.1', baseUrl: batches.baseUrl, apiKey: 'sk-test' });
    const ledger = newLedger();
    const judge = judgeWith({ inner, service: batchServiceFor('openai', { model: 'openai:batch', endpoint: { baseUrl: batches.baseUrl } }, { apiKey: 'sk-test' }), ledger, maxRequestsPerBatch: 4 });
    const replies = await Promise.all(Array.from({ length: 10 }, (_, index) => judge.complete(requestFor(index), { signal })));
    expect(replies.every((reply) => JSON.parse(reply.text).criteria_met === true && reply.usage.batch === true)).toBe(true);
    expect(ledger.all().map((batch) => batch.requestCount)).toEqual([4, 4, 2]);
    expect(batches.createdBatches).toBe(3);
    expect(backend.requests).toHaveLength(10);
  });

  it('splits by bytes per input file, and refuses one request larger than the limit', async () => {
    const { batches } = await openAIFakes();
    const inner = createOpenAICompatibleJudge({ model: 'gpt-4.1', baseUrl: batches.baseUrl, apiKey: 'sk-test' });
    const service = batchServiceFor('openai', { model: 'openai:batch', endpoint: { baseUrl: batches.baseUrl } }, { apiKey: 'sk-test' });
    const oneEntry = service.entryBytes(service.entry('rb-00000000000000000000000000000000-0', inner.requestBody(requestFor(0))));
    const maxBytes = oneEntry * 3 + 10;
    const judge = judgeWith({ inner, service, ledger: newLedger(), maxBytesPerBatch: maxBytes });
    const settled = await settleAll([...Array.from({ length: 10 }, (_, index) => judge.complete(requestFor(index), { signal })), judge.complete(requestFor(99, 2000), { signal })]);
    expect(settled.slice(0, 10).every((outcome) => outcome.status === 'fulfilled')).toBe(true);
    const oversized = settled[10];
    expect(oversized.status === 'rejected' && (oversized.reason as { code: string }).code).toBe('JUDGE_REQUEST_REJECTED');
    expect(batches.uploadedBytes).toHaveLength(4);
    for (const bytes of batches.uploadedBytes) expect(bytes).toBeLessThanOrEqual(maxBytes);
  });

  it('keeps the open batches under the enqueued-token limit: a batch waits for earlier ones instead of failing', async () => {
    const count = tokenizerFor('gpt-4.1').count;
    const countBody = (body: Record<string, unknown>) => requestInputTokens({ messages: body.messages as ChatMessage[] }, count);
    const perRequest = requestInputTokens(requestFor(0), count);
    const limit = Math.floor(perRequest * 3.5);
    const { batches } = await openAIFakes({ maxEnqueuedTokens: limit, countTokens: countBody, retrievesPerStage: 2 });
    const inner = createOpenAICompatibleJudge({ model: 'gpt-4.1', baseUrl: batches.baseUrl, apiKey: 'sk-test' });
    const events: BatchEvent[] = [];
    const judge = judgeWith({ inner, service: batchServiceFor('openai', { model: 'openai:batch', endpoint: { baseUrl: batches.baseUrl } }, { apiKey: 'sk-test' }), ledger: newLedger(), maxEnqueuedTokens: limit, onEvent: (event) => events.push(event) });
    const replies = await Promise.all(Array.from({ length: 10 }, (_, index) => judge.complete(requestFor(index), { signal })));
    expect(replies).toHaveLength(10);
    expect(batches.batches().map((batch) => [batch.status, batch.request_counts.total])).toEqual([
      ['completed', 3],
      ['completed', 3],
      ['completed', 3],
      ['completed', 1],
    ]);
    expect(batches.peakEnqueuedTokens).toBeLessThanOrEqual(limit);
    expect(events.filter((event) => event.type === 'waiting').length).toBeGreaterThan(0);
  });

  it('without the limit the provider fails the batch (token_limit_exceeded), and its requests are reported unanswered with the reason', async () => {
    const count = tokenizerFor('gpt-4.1').count;
    const perRequest = requestInputTokens(requestFor(0), count);
    const { batches } = await openAIFakes({ maxEnqueuedTokens: perRequest * 3, countTokens: (body) => requestInputTokens({ messages: body.messages as ChatMessage[] }, count) });
    const inner = createOpenAICompatibleJudge({ model: 'gpt-4.1', baseUrl: batches.baseUrl, apiKey: 'sk-test' });
    const judge = judgeWith({ inner, service: batchServiceFor('openai', { model: 'openai:batch', endpoint: { baseUrl: batches.baseUrl } }, { apiKey: 'sk-test' }), ledger: newLedger() });
    const settled = await settleAll(Array.from({ length: 5 }, (_, index) => judge.complete(requestFor(index), { signal })));
    for (const outcome of settled) {
      expect(outcome.status).toBe('rejected');
      const error = (outcome as PromiseRejectedResult).reason as { code: string; message: string };
      expect(error.code).toBe('JUDGE_BATCH_UNANSWERED');
      expect(error.message).toMatch(/failed without answering this request: token_limit_exceeded: Enqueued token limit reached/);
    }
  });
});

describe('batch judge: Azure OpenAI through the same client', () => {
  it('uploads and creates under /openai with api-version and the api-key header; lines name /chat/completions and the deployment', async () => {
    const { backend, batches } = await openAIFakes({ azure: { apiKey: 'azure-key' } });
    const inner = (await createJudge({ model: 'azure:gpt-41-batch', endpoint: { baseUrl: batches.baseUrl } }, { apiKey: 'azure-key' })) as BodyBuildingJudge;
    closers.push(() => inner.close?.());
    const ledger = newLedger();
    const judge = judgeWith({ inner, service: batchServiceFor('azure', { model: 'azure:batch', endpoint: { baseUrl: batches.baseUrl }, openai: { azureApiVersion: '2024-10-21' } }, { apiKey: 'azure-key' }), ledger });
    const replies = await Promise.all(Array.from({ length: 5 }, (_, index) => judge.complete(requestFor(index), { signal })));
    expect(replies.every((reply) => reply.usage.batch === true)).toBe(true);
    expect(ledger.all().map((batch) => [batch.provider, batch.status, batch.requestCount])).toEqual([['azure', 'completed', 5]]);
    expect(backend.requests.every((request) => request.body.model === 'gpt-41-batch')).toBe(true);
  });

  it("a wrong key gets Azure's 401, reported as an authentication error on every call", async () => {
    const { batches } = await openAIFakes({ azure: { apiKey: 'azure-key' } });
    const inner = (await createJudge({ model: 'azure:gpt-41-batch', endpoint: { baseUrl: batches.baseUrl } }, { apiKey: 'wrong' })) as BodyBuildingJudge;
    closers.push(() => inner.close?.());
    const judge = judgeWith({ inner, service: batchServiceFor('azure', { model: 'azure:batch', endpoint: { baseUrl: batches.baseUrl } }, { apiKey: 'wrong' }), ledger: newLedger() });
    const settled = await settleAll([judge.complete(requestFor(0), { signal })]);
    expect(settled[0].status === 'rejected' && ((settled[0] as PromiseRejectedResult).reason as { code: string }).code).toBe('JUDGE_AUTH');
    expect(batches.createdBatches).toBe(0);
  });
});

describe('batch judge: Anthropic Message Batches, killed between the create and recording it', () => {
  async function anthropicSetup() {
    const messages = await startFakeAnthropic();
    const batches = await startFakeAnthropicBatch({ backendBaseUrl: messages.baseUrl });
    closers.push(() => messages.close(), () => batches.close());
    const inner = createAnthropicJudge({ model: 'claude-sonnet-4-5', baseUrl: batches.baseUrl, apiKey: 'test-anthropic-key' });
    const service = batchServiceFor('anthropic', { model: 'anthropic:batch', endpoint: { baseUrl: batches.baseUrl } }, { apiKey: 'test-anthropic-key' });
    return { messages, batches, inner, service };
  }

  /** A service that dies (as a killed process would) right after, or right before, the create call. */
  function dying(service: BatchService, when: 'after-create' | 'before-create'): BatchService {
    return {
      ...service,
      async submit(localId, entries, ledger) {
        ledger.update(localId, { status: 'sending' });
        if (when === 'after-create') await service.submit(localId, entries, { created: () => undefined, update: () => undefined, uploaded: () => undefined } as unknown as BatchLedger);
        throw new Error('process killed');
      },
    };
  }

  it('a rerun finds the batch made by the lost create in the list and attaches to it: nothing is sent twice', async () => {
    const { messages, batches, inner, service } = await anthropicSetup();
    const ledger = newLedger();
    const first = createBatchJudge({ inner, service: dying(service, 'after-create'), ledger, gatherMs: 20, pollIntervalMs: 5 });
    await settleAll(Array.from({ length: 4 }, (_, index) => first.complete(requestFor(index), { signal })));
    await first.close();
    expect(batches.createdBatches).toBe(1);
    expect(ledger.all().map((batch) => [batch.status, batch.batchId])).toEqual([['sending', null]]);

    const events: BatchEvent[] = [];
    const second = judgeWith({ inner, service, ledger, onEvent: (event) => events.push(event) });
    const replies = await Promise.all(Array.from({ length: 4 }, (_, index) => second.complete(requestFor(index), { signal })));
    expect(replies.map((reply) => JSON.parse(reply.text).criteria_met)).toEqual([true, true, true, true]);
    expect(batches.createdBatches).toBe(1);
    expect(batches.receivedRequests).toBe(4);
    expect(messages.requests).toHaveLength(4);
    expect(second.submittedRequests).toBe(0);
    expect(ledger.all()[0].batchId).toBe(batches.batches()[0].id);
    expect(events.some((event) => event.type === 'attached')).toBe(true);
  });

  it('when the lost create never reached the provider, the rerun sends the requests once', async () => {
    const { batches, inner, service } = await anthropicSetup();
    const ledger = newLedger();
    const first = createBatchJudge({ inner, service: dying(service, 'before-create'), ledger, gatherMs: 20, pollIntervalMs: 5 });
    await settleAll(Array.from({ length: 3 }, (_, index) => first.complete(requestFor(index), { signal })));
    await first.close();
    expect(batches.createdBatches).toBe(0);

    const second = judgeWith({ inner, service, ledger });
    const replies = await Promise.all(Array.from({ length: 3 }, (_, index) => second.complete(requestFor(index), { signal })));
    expect(replies).toHaveLength(3);
    expect(batches.createdBatches).toBe(1);
    expect(batches.receivedRequests).toBe(3);
    expect(ledger.all().map((batch) => batch.status)).toEqual(['abandoned', 'ended']);
  });
});

describe('batch judge: roles in the ledger', () => {
  it('a generator and a judge of the same model and endpoint each attach only to their own batches on a rerun', async () => {
    const { batches } = await openAIFakes({ retrievesPerStage: 1_000 });
    const inner = createOpenAICompatibleJudge({ model: 'gpt-4.1', baseUrl: batches.baseUrl, apiKey: 'sk-test' });
    const service = batchServiceFor('openai', { model: 'openai:batch', endpoint: { baseUrl: batches.baseUrl } }, { apiKey: 'sk-test' });
    const ledger = newLedger();
    const generatorRequest = (index: number) => ({ ...requestFor(index), messages: [{ role: 'user' as const, content: `Write criteria for prompt ${index}` }] });
    // The first run is stopped with both batches in flight (as a killed process leaves them).
    const firstGenerator = createBatchJudge({ inner, service, ledger, role: 'generator', gatherMs: 20, pollIntervalMs: 5 });
    const firstJudge = createBatchJudge({ inner, service, ledger, gatherMs: 20, pollIntervalMs: 5 });
    const stop = new AbortController();
    const pending = [...[0, 1].map((index) => firstGenerator.complete(generatorRequest(index), { signal: stop.signal })), ...[0, 1, 2].map((index) => firstJudge.complete(requestFor(index), { signal: stop.signal }))];
    await new Promise<void>((resolve) => batches.events.on('create', () => batches.createdBatches === 2 && resolve()));
    stop.abort();
    await settleAll(pending);
    await firstGenerator.close();
    await firstJudge.close();
    expect(ledger.all().map((batch) => [batch.role, batch.requestCount]).sort()).toEqual([['generator', 2], ['judge', 3]]);

    const attached: Record<string, number[]> = { generator: [], judge: [] };
    const rerun = (role: 'generator' | 'judge') => judgeWith({ inner, service, ledger, role, onEvent: (event) => event.type === 'attached' && attached[role].push(event.requests) });
    const generator = rerun('generator');
    const judge = rerun('judge');
    expect(attached).toEqual({ generator: [2], judge: [3] });
    expect(generator.submittedRequests + judge.submittedRequests).toBe(0);
    expect(batches.receivedRequests).toBe(5);
  });

  it('reads the batches of a ledger written before roles existed as the judge\'s', () => {
    const path = join(ledgerDirectory(), 'cache.sqlite');
    const old = openSqlite(path);
    old.exec(`CREATE TABLE rubricate_batches (
        local_id TEXT PRIMARY KEY, provider TEXT NOT NULL, endpoint TEXT NOT NULL, model TEXT NOT NULL,
        file_id TEXT, batch_id TEXT, status TEXT NOT NULL, created_at INTEGER NOT NULL,
        request_count INTEGER NOT NULL, completed INTEGER NOT NULL DEFAULT 0, failed INTEGER NOT NULL DEFAULT 0,
        prompt_tokens INTEGER NOT NULL DEFAULT 0, cached_prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,
        delivered INTEGER NOT NULL DEFAULT 0)`);
    old.prepare("INSERT INTO rubricate_batches (local_id, provider, endpoint, model, batch_id, status, created_at, request_count) VALUES ('rbatch_old', 'openai', 'http://127.0.0.1:9/v1', 'gpt-4.1', 'batch_1', 'in_progress', 1, 3)").run();
    old.close();
    const ledger = new BatchLedger(path);
    closers.push(() => ledger.close());
    expect(ledger.open('openai', 'http://127.0.0.1:9/v1', 'gpt-4.1').map((batch) => [batch.localId, batch.role])).toEqual([['rbatch_old', 'judge']]);
    expect(ledger.open('openai', 'http://127.0.0.1:9/v1', 'gpt-4.1', 'generator')).toEqual([]);
  });
});
