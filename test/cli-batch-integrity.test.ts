/**
 * `--batch` results are complete and honest, or the request fails with its reason: a result
 * file that repeats a custom id with a different answer fails that request (never first- or
 * last-line-wins); a finished batch whose results are gone (404) fails its requests after a
 * bounded number of reads instead of being polled for ever; and a download redirected to another
 * origin reaches it with no credential at all (OpenAI's `Authorization`, Azure's `api-key`,
 * Anthropic's `x-api-key`, `--judge-header`s). Through the CLI in this process, on loopback fakes.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { test } from '../src/testing/vitest-fixtures.js';
import { binaryVerdict, startFakeJudge, type FakeJudgeRequest } from '../src/testing/fake-judge.js';
import { startFakeOpenAIBatch, type FakeBatchOptions } from '../src/testing/fake-openai-batch.js';
import { startFakeAnthropic, type FakeAnthropicRequest } from '../src/testing/fake-anthropic.js';
import { startFakeAnthropicBatch, type FakeAnthropicBatchOptions } from '../src/testing/fake-anthropic-batch.js';
import { expectedVerdict, readResults, smallInput, type ResultLine } from './batch-helpers.js';
import { BatchLedger } from '../src/batch/ledger.js';
import { runCliInProcess } from './helpers.js';
import { hangGuard } from '../src/testing/hang-guard.js';

type Closer = <T extends { close(): Promise<void> | void }>(resource: T) => T;

const openAIKey = 'sk-test-batch';
const anthropicKey = 'test-anthropic-key';
const azureKey = 'azure-batch-key-0123456789';
const gatewayToken = 'gw-secret-token-42';

/** The three items of `smallInput`: six criteria, each a scripted verdict. */
const criteriaCount = 6;

async function openAIFakes(closeAfter: Closer, options: Omit<FakeBatchOptions, 'backendBaseUrl'> = {}) {
  const backend = closeAfter(
    await startFakeJudge((request: FakeJudgeRequest) => ({ content: binaryVerdict(expectedVerdict(request.criteria[0]?.text ?? '', request.response ?? '')), usage: { prompt_tokens: 400, completion_tokens: 30 } })),
  );
  const api = closeAfter(await startFakeOpenAIBatch({ backendBaseUrl: backend.baseUrl, ...options }));
  return { backend, api };
}

async function anthropicFakes(closeAfter: Closer, options: Omit<FakeAnthropicBatchOptions, 'backendBaseUrl'> = {}) {
  const backend = closeAfter(
    await startFakeAnthropic((request: FakeAnthropicRequest) => ({ input: { explanation: 'Checked.', criteria_met: expectedVerdict(request.criteria[0]?.text ?? '', request.response ?? '') } }), { minimumCacheTokens: Number.MAX_SAFE_INTEGER }),
  );
  const api = closeAfter(await startFakeAnthropicBatch({ backendBaseUrl: backend.baseUrl, ...options }));
  return { backend, api };
}

function openAIArgs(directory: string, baseUrl: string, extra: string[] = []): string[] {
  return ['grade', '--input', smallInput(directory), '--scoring', 'weighted_mean', '--judge', 'openai:gpt-4.1', '--judge-base-url', baseUrl, '--judge-api-key', openAIKey, '--cache', join(directory, 'cache.sqlite'), '--out', join(directory, 'out.jsonl'), '--batch', '--batch-poll', '0.02', ...extra];
}

function anthropicArgs(directory: string, baseUrl: string, extra: string[] = []): string[] {
  return ['grade', '--input', smallInput(directory), '--scoring', 'weighted_mean', '--judge', 'anthropic:claude-sonnet-4-5', '--judge-base-url', baseUrl, '--judge-api-key', anthropicKey, '--cache', join(directory, 'cache.sqlite'), '--out', join(directory, 'out.jsonl'), '--batch', '--batch-poll', '0.02', ...extra];
}

/**
 * Each test has fakes and folders of its own and spends most of its time waiting (a batch is
 * submitted after a second of quiet, a retry after its backoff), so the tests run side by side.
 */
const sideBySide = { timeout: hangGuard(120_000), concurrent: true };

/** Every criterion of the results, by its text. */
function criteriaOf(results: ResultLine[]): Map<string, ResultLine['criteria'][number] & { response: string }> {
  const map = new Map<string, ResultLine['criteria'][number] & { response: string }>();
  for (const line of results) for (const criterion of line.criteria) map.set(criterion.text, { ...criterion, response: String(line.response) });
  return map;
}

/** Every criterion not in `except` has its scripted verdict. */
function expectScriptedVerdicts(results: ResultLine[], except: string[] = []): void {
  const criteria = criteriaOf(results);
  expect(criteria.size).toBe(criteriaCount);
  for (const [text, criterion] of criteria) {
    if (except.includes(text)) continue;
    expect(criterion.error, text).toBeUndefined();
    expect(criterion.met, text).toBe(expectedVerdict(text, criterion.response));
  }
}

/** The same result line with the other verdict: what a conflicting duplicate says. */
function flippedOpenAIEntry(entry: Record<string, unknown>): Record<string, unknown> {
  const copy = structuredClone(entry) as { response: { body: { choices: Array<{ message: { content: string } }> } } };
  const message = copy.response.body.choices[0].message;
  const verdict = JSON.parse(message.content) as { criteria_met: boolean };
  message.content = JSON.stringify({ ...verdict, criteria_met: !verdict.criteria_met });
  return copy as unknown as Record<string, unknown>;
}

function flippedAnthropicLine(line: Record<string, unknown>): Record<string, unknown> {
  const copy = structuredClone(line) as { result: { message: { content: Array<{ input: { criteria_met: boolean } }> } } };
  const input = copy.result.message.content[0].input;
  input.criteria_met = !input.criteria_met;
  return copy as unknown as Record<string, unknown>;
}

interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

/** A second loopback origin a download is redirected to: it records each request and serves `body(path)`. */
async function startOtherOrigin(closeAfter: Closer, body: (path: string) => string | undefined): Promise<{ url: string; requests: RecordedRequest[] }> {
  const requests: RecordedRequest[] = [];
  const server = http.createServer((incoming, outgoing) => {
    requests.push({ method: incoming.method ?? '', url: incoming.url ?? '', headers: incoming.headers });
    const text = body(incoming.url ?? '');
    if (text === undefined) outgoing.writeHead(404).end();
    else outgoing.writeHead(200, { 'content-type': 'application/octet-stream' }).end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closeAfter({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

/** The other origin got only downloads, and no credential of any kind in any header. */
function expectNoCredentials(requests: RecordedRequest[]): void {
  expect(requests.length).toBeGreaterThan(0);
  for (const request of requests) {
    expect(request.method).toBe('GET');
    for (const name of ['authorization', 'x-api-key', 'api-key', 'x-gateway-token', 'cookie']) expect(request.headers[name], name).toBeUndefined();
    const values = JSON.stringify(request.headers);
    for (const secret of [openAIKey, anthropicKey, azureKey, gatewayToken]) expect(values).not.toContain(secret);
  }
}

describe('a result file that repeats a custom id', sideBySide, () => {
  test('OpenAI: a different answer fails that request (retried, then JUDGE_BATCH_UNANSWERED), an identical copy is one answer', async ({ tempDir, closeAfter }) => {
    const { api } = await openAIFakes(closeAfter, {
      duplicateResult: (entry, request) => {
        const text = JSON.stringify(request.body);
        if (text.includes('Criterion A1')) return flippedOpenAIEntry(entry);
        return text.includes('Criterion B0') ? entry : undefined;
      },
    });
    const input = smallInput(tempDir);
    const before = readFileSync(input, 'utf8');
    const result = await runCliInProcess(openAIArgs(tempDir, api.baseUrl, ['--max-attempts', '2']));
    expect(result.code, result.stderr).toBe(3);
    const results = readResults(join(tempDir, 'out.jsonl'));
    const conflicted = criteriaOf(results).get('Criterion A1')!;
    expect(conflicted.met ?? null).toBeNull();
    expect(conflicted.error?.code).toBe('JUDGE_BATCH_UNANSWERED');
    expect(conflicted.error?.message).toMatch(/returned two different results for this request \(custom id rb-[0-9a-f]+-\d\): neither is used/);
    expect(results[1].status).toBe('error');
    expectScriptedVerdicts(results, ['Criterion A1']);
    // The conflicting request went in a second batch (its retry), and conflicted again.
    expect(api.createdBatches).toBe(2);
    expect(api.receivedRequests).toBe(criteriaCount + 1);
    expect(readFileSync(input, 'utf8')).toBe(before);
  });

  test('Anthropic: the same rule', async ({ tempDir, closeAfter }) => {
    const { api } = await anthropicFakes(closeAfter, {
      duplicateResult: (line, request) => {
        const text = JSON.stringify(request.params);
        if (text.includes('Criterion A1')) return flippedAnthropicLine(line);
        return text.includes('Criterion B0') ? line : undefined;
      },
    });
    const result = await runCliInProcess(anthropicArgs(tempDir, api.baseUrl, ['--max-attempts', '2']));
    expect(result.code, result.stderr).toBe(3);
    const results = readResults(join(tempDir, 'out.jsonl'));
    const conflicted = criteriaOf(results).get('Criterion A1')!;
    expect(conflicted.met ?? null).toBeNull();
    expect(conflicted.error?.code).toBe('JUDGE_BATCH_UNANSWERED');
    expect(conflicted.error?.message).toMatch(/two different results/);
    expectScriptedVerdicts(results, ['Criterion A1']);
    expect(api.receivedRequests).toBe(criteriaCount + 1);
  });
});

describe('a finished batch whose results are gone (404)', sideBySide, () => {
  test('OpenAI: only the first output file gone: its requests fail after 5 reads and are retried in a new batch, which is read', async ({ tempDir, closeAfter }) => {
    const firstGone = await openAIFakes(closeAfter, { fileGone: (file) => file.filename.startsWith('batch_1_') });
    const recovered = await runCliInProcess(openAIArgs(tempDir, firstGone.api.baseUrl));
    expect(recovered.code, recovered.stderr).toBe(0);
    expect(recovered.stderr).toMatch(/batch batch_1 ended completed, but its results could not be read \(try 4 of 5\): .*No such File object/);
    expectScriptedVerdicts(readResults(join(tempDir, 'out.jsonl')));
    expect(firstGone.api.createdBatches).toBe(2);
    expect(firstGone.api.receivedRequests).toBe(2 * criteriaCount);
  });

  test('OpenAI: every output file gone: each attempt\'s batch fails its requests with the reason, then the run ends (exit 4)', async ({ tempDir, closeAfter }) => {
    const allGone = await openAIFakes(closeAfter, { fileGone: () => true });
    const failed = await runCliInProcess(openAIArgs(tempDir, allGone.api.baseUrl, ['--max-attempts', '2']));
    expect(failed.code, failed.stderr).toBe(4);
    const criteria = criteriaOf(readResults(join(tempDir, 'out.jsonl')));
    for (const criterion of criteria.values()) {
      expect(criterion.met ?? null).toBeNull();
      expect(criterion.error?.code).toBe('JUDGE_BATCH_UNANSWERED');
      expect(criterion.error?.message).toMatch(/ended completed, but its results could not be read in 5 tries: .*404.*No such File object/);
    }
    expect(allGone.api.createdBatches).toBe(2);
  });

  test('OpenAI: every output file gone, --batch-fallback sync answers what the batches could not deliver', async ({ tempDir, closeAfter }) => {
    const withFallback = await openAIFakes(closeAfter, { fileGone: () => true });
    const fallback = await runCliInProcess(openAIArgs(tempDir, withFallback.api.baseUrl, ['--batch-fallback', 'sync']));
    expect(fallback.code, fallback.stderr).toBe(0);
    expectScriptedVerdicts(readResults(join(tempDir, 'out.jsonl')));
    expect(withFallback.backend.requests).toHaveLength(2 * criteriaCount);
  });

  test('Anthropic: results answering 404 fail the requests after 5 reads (exit 4), never polled for ever', async ({ tempDir, closeAfter }) => {
    const { api } = await anthropicFakes(closeAfter, { resultsGone: () => true });
    const result = await runCliInProcess(anthropicArgs(tempDir, api.baseUrl, ['--max-attempts', '1']));
    expect(result.code, result.stderr).toBe(4);
    for (const criterion of criteriaOf(readResults(join(tempDir, 'out.jsonl'))).values()) {
      expect(criterion.error?.code).toBe('JUDGE_BATCH_UNANSWERED');
      expect(criterion.error?.message).toMatch(/ended ended, but its results could not be read in 5 tries: .*results not found/);
    }
    expect(api.createdBatches).toBe(1);
  });
});

describe('a download redirected to another origin carries no credential', sideBySide, () => {
  test('OpenAI: the file content is fetched from the other origin without Authorization or --judge-header', async ({ tempDir, closeAfter }) => {
    let fileContent: (id: string) => string | undefined = () => undefined;
    const other = await startOtherOrigin(closeAfter, (path) => fileContent(path.replace(/^\/content\//, '')));
    const { api } = await openAIFakes(closeAfter, { redirectContent: (fileId) => `${other.url}/content/${fileId}` });
    fileContent = (id) => api.fileContent(id);
    const result = await runCliInProcess(openAIArgs(tempDir, api.baseUrl, ['--judge-header', `x-gateway-token=${gatewayToken}`]));
    expect(result.code, result.stderr).toBe(0);
    expectScriptedVerdicts(readResults(join(tempDir, 'out.jsonl')));
    expectNoCredentials(other.requests);
  });

  test('OpenAI: a same-origin redirect keeps the key (the fake answers the redirected path only with it: a run that completes kept it)', async ({ tempDir, closeAfter }) => {
    const same = await openAIFakes(closeAfter, { redirectContent: (fileId, url) => (url.searchParams.has('hop') ? undefined : `/v1/files/${fileId}/content?hop=1`) });
    const sameOrigin = await runCliInProcess(openAIArgs(tempDir, same.api.baseUrl));
    expect(sameOrigin.code, sameOrigin.stderr).toBe(0);
    expectScriptedVerdicts(readResults(join(tempDir, 'out.jsonl')));
  });

  test('Azure OpenAI: the api-key header never reaches the other origin', async ({ tempDir, closeAfter }) => {
    let fileContent: (id: string) => string | undefined = () => undefined;
    const other = await startOtherOrigin(closeAfter, (path) => fileContent(path.replace(/^\/content\//, '')));
    const { api } = await openAIFakes(closeAfter, { azure: { apiKey: azureKey }, redirectContent: (fileId) => `${other.url}/content/${fileId}` });
    fileContent = (id) => api.fileContent(id);
    const args = ['grade', '--input', smallInput(tempDir), '--scoring', 'weighted_mean', '--judge', 'azure:gpt-41-batch', '--judge-base-url', api.baseUrl, '--judge-api-key', azureKey, '--azure-api-version', '2024-10-21'];
    const result = await runCliInProcess([...args, '--cache', join(tempDir, 'cache.sqlite'), '--out', join(tempDir, 'out.jsonl'), '--batch', '--batch-poll', '0.02']);
    expect(result.code, result.stderr).toBe(0);
    expectScriptedVerdicts(readResults(join(tempDir, 'out.jsonl')));
    expectNoCredentials(other.requests);
  });

  test('Anthropic: the results are fetched from the other origin without x-api-key', async ({ tempDir, closeAfter }) => {
    let results: (id: string) => string | undefined = () => undefined;
    const other = await startOtherOrigin(closeAfter, (path) => results(path.replace(/^\/results\//, '')));
    const { api } = await anthropicFakes(closeAfter, { redirectResults: (batchId) => `${other.url}/results/${batchId}` });
    results = (id) => api.resultsOf(id);
    const result = await runCliInProcess(anthropicArgs(tempDir, api.baseUrl, ['--judge-header', `x-gateway-token=${gatewayToken}`]));
    expect(result.code, result.stderr).toBe(0);
    expectScriptedVerdicts(readResults(join(tempDir, 'out.jsonl')));
    expectNoCredentials(other.requests);
  });
});

describe('batches --cancel with odd ids', sideBySide, () => {
  test('an ended batch, an unknown id, an id with odd characters, a missing cache: clear usage errors (exit 2), nothing sent, nothing changed', async ({ tempDir, closeAfter }) => {
    const { api } = await openAIFakes(closeAfter);
    const graded = await runCliInProcess(openAIArgs(tempDir, api.baseUrl, ['--quiet']));
    expect(graded.code, graded.stderr).toBe(0);
    let cancels = 0;
    api.events.on('cancel', () => (cancels += 1));
    const cache = join(tempDir, 'cache.sqlite');
    const results = readFileSync(join(tempDir, 'out.jsonl'), 'utf8');
    const apiFlags = ['--judge-base-url', api.baseUrl, '--judge-api-key', openAIKey];
    const cancel = (id: string, cacheFile = cache) => runCliInProcess(['batches', '--cache', cacheFile, '--cancel', id, ...apiFlags]);

    const ended = await cancel('batch_1');
    expect(ended.code).toBe(2);
    expect(ended.stderr).toMatch(/^error \[CONFIG_INVALID\]: field cancel: batch batch_1 has already ended \(completed\): there is nothing to cancel$/m);

    const unknown = await cancel('batch_999');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(`error [CONFIG_INVALID]: field cancel: no submitted batch "batch_999" in ${cache}`);

    for (const odd of ['../../etc/passwd', 'batch 1; rm -rf ~', 'batch_1\u001b[2J', '', 'x'.repeat(300)]) {
      const refused = await cancel(odd);
      expect(refused.code, odd).toBe(2);
      expect(refused.stderr).toMatch(/error \[CONFIG_INVALID\]: field cancel: --cancel takes a batch id \(letters, digits, _ \. : -\), got "/);
      // The id is shown escaped and short: no terminal control sequence, no 300-character line.
      expect(refused.stderr).not.toContain('\u001b');
      expect(refused.stderr.length).toBeLessThan(300);
    }

    // The ledger is behind (it says in progress) while the provider has finished: the provider's refusal is explained, and the ledger caught up.
    const ledger = new BatchLedger(cache);
    ledger.update(ledger.get('batch_1')!.localId, { status: 'in_progress' });
    ledger.close();
    const behind = await cancel('batch_1');
    expect(behind.code, behind.stderr).toBe(2);
    expect(behind.stderr).toContain('batch batch_1 has already ended (completed): there is nothing to cancel');
    const listed = await runCliInProcess(['batches', '--cache', cache, '--json']);
    // One JSON object per batch (a loaded machine may have split the run's calls into several batches).
    const batches = listed.stdout.trim().split('\n').map((line) => JSON.parse(line) as { id?: string; batch_id?: string; status: string });
    expect(batches.find((batch) => (batch.batch_id ?? batch.id) === 'batch_1')?.status).toBe('completed');

    // No cache at all (its folder missing): no internal error, and no file is made.
    const missing = join(tempDir, 'no-such-folder', 'cache.sqlite');
    const noCache = await cancel('batch_1', missing);
    expect(noCache.code).toBe(2);
    expect(noCache.stderr).toContain(`no submitted batch "batch_1": there is no cache at ${missing}`);
    const listing = await runCliInProcess(['batches', '--cache', join(tempDir, 'absent.sqlite')]);
    expect(listing.code, listing.stderr).toBe(0);
    expect(listing.stdout).toBe('batch\tstatus\tmodel\trequests\tanswered\tfailed\tcost_usd');
    expect(existsSync(join(tempDir, 'absent.sqlite'))).toBe(false);
    expect(existsSync(join(tempDir, 'no-such-folder'))).toBe(false);

    // Only the stale-ledger case reached the provider's cancel (which refused it); the results never changed.
    expect(cancels).toBe(0);
    expect(readFileSync(join(tempDir, 'out.jsonl'), 'utf8')).toBe(results);
  });
});
