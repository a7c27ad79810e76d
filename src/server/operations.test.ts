import { pino } from 'pino';
import { describe, expect, vi } from 'vitest';
import { SqliteReplyStore } from '../store/index.js';
import { binaryVerdict } from '../testing/fake-judge.js';
import { safeParseJson } from '../util/json.js';
import { createServerApp } from './app.js';
import { parseScoreItem } from './input.js';
import { startServer } from './start.js';
import { ServerState } from './state.js';
import { criterionMet, fruitRubric, startTestServer } from './test-support.js';
import { test } from '../testing/vitest-fixtures.js';

const prompt = 'Name some fruit.';
const item = (response: string, id?: string) => ({ ...(id ? { id } : {}), prompt, response, rubric: fruitRubric });
const slowScript = (delayMs: number) => (request: { criteria: Array<{ text: string }>; response?: string }) => ({
  content: binaryVerdict(criterionMet(request.criteria[0].text, request.response ?? '')),
  delayMs,
});

/** A judge that answers only once `release` is called: waits are events, not clock races. */
function gatedScript() {
  let release!: () => void;
  const opened = new Promise<void>((resolve) => (release = resolve));
  const script = async (request: { criteria: Array<{ text: string }>; response?: string }) => {
    await opened;
    return { content: binaryVerdict(criterionMet(request.criteria[0].text, request.response ?? '')) };
  };
  return { script, release };
}

describe('authentication', () => {
  test('refuses a missing or wrong token with the same 401, accepts the right one in the header or the query', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ app: { token: 's3cret-token' } }));
    const missing = await server.post('/v1/score', item('apples'));
    const wrong = await server.post('/v1/score', item('apples'), { authorization: 'Bearer s3cret-tokeN' });
    const truncated = await server.post('/v1/score', item('apples'), { authorization: 'Bearer s3cret' });
    for (const refused of [missing, wrong, truncated]) {
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer');
      expect(await refused.json()).toEqual({ error: { code: 'UNAUTHORIZED', message: 'unauthorized' } });
    }
    expect(server.fake.requests).toHaveLength(0);
    const right = await server.post('/v1/score', item('apples'), { authorization: 'Bearer s3cret-token' });
    expect(right.status).toBe(200);
    expect((await right.json()).reward).toBe(0.75);
    const viaQuery = await server.post('/get_reward?token=s3cret-token', { query: ['apples'], prompts: [''], labels: [fruitRubric] });
    expect(viaQuery.status).toBe(200);
    const wrongQuery = await server.post('/get_reward?token=nope', { query: ['apples'], prompts: [''], labels: [fruitRubric] });
    expect(wrongQuery.status).toBe(401);
  });

  test('leaves /healthz open and protects /metrics', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ app: { token: 't' } }));
    expect((await server.app.request('/healthz')).status).toBe(200);
    expect((await server.app.request('/metrics')).status).toBe(401);
    expect((await server.app.request('/metrics', { headers: { authorization: 'Bearer t' } })).status).toBe(200);
  });
});

describe('request body limit', () => {
  test('answers 413 when Content-Length is over the limit, and when a streamed body grows past it', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ app: { maxBodyBytes: 300 } }));
    const big = JSON.stringify(item('x'.repeat(400)));
    const declared = await server.post('/v1/score', big);
    expect(declared.status).toBe(413);
    expect((await declared.json()).error).toMatchObject({ code: 'INPUT_INVALID' });
    const encoder = new TextEncoder();
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let offset = 0; offset < big.length; offset += 100) controller.enqueue(encoder.encode(big.slice(offset, offset + 100)));
        controller.close();
      },
    });
    const streamed = await server.app.request('/v1/score', { method: 'POST', body: stream, headers: { 'content-type': 'application/json' }, duplex: 'half' } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(await streamed.json()).toMatchObject({ error: { message: expect.stringMatching(/larger than 300 bytes/) } });
    const small = await server.post('/v1/score', item('apples'));
    expect(small.status).toBe(200);
    expect(server.fake.requests).toHaveLength(3);
  });

  test('answers 400 for a body that is not JSON', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const response = await server.post('/v1/score', '{"prompt": ');
    expect(response.status).toBe(400);
    expect((await response.json()).error.message).toMatch(/not valid JSON/);
  });
});

describe('per-request deadline', () => {
  test('answers 504 for a single item past the deadline; grading goes on and a retry reads the cache', async ({ closeAfter }) => {
    const store = closeAfter(new SqliteReplyStore(':memory:'));
    const judge = gatedScript();
    const server = closeAfter(await startTestServer({ script: judge.script, service: { deadlineMs: 80, grading: { store } } }));
    // The judge holds its answer until released, so this 504 can only come from the deadline.
    const late = await server.post('/v1/score', item('apples and pears'));
    expect(late.status).toBe(504);
    expect((await late.json()).error.code).toBe('DEADLINE_EXCEEDED');
    // The abandoned work still holds its queue slot until it ends.
    expect(server.service.admission.used).toBe(1);
    judge.release();
    expect(await server.service.idle(2_000)).toBe(true);
    const retried = await (await server.post('/v1/score', item('apples and pears'))).json();
    expect(retried).toMatchObject({ reward: 1, status: 'ok' });
    expect(retried.usage).toMatchObject({ calls: 0, cache_hits: 3 });
    expect(server.fake.requests).toHaveLength(3);
  });

  test('in a batch, late items are errors with reward null (or the flagged fallback), finished ones keep their reward', async ({ closeAfter }) => {
    const store = closeAfter(new SqliteReplyStore(':memory:'));
    // The slow item's judge answers only when released; the other item's verdicts are cached
    // first, so its grading ends within the request's own turn, before any timer can fire.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const server = closeAfter(await startTestServer({
      script: async (request) => {
        if (request.response === 'slow pears') await released;
        return { content: binaryVerdict(criterionMet(request.criteria[0].text, request.response ?? '')) };
      },
      service: { deadlineMs: 100, grading: { store } },
    }));
    try {
      const primed = await server.service.scoreItems([parseScoreItem(item('apples'))], { deadlineMs: 60_000 });
      expect(primed.results[0].reward).toBe(0.75);
      const body = await (await server.post('/v1/score/batch', { items: [item('apples'), item('slow pears')] })).json();
      expect(body.results[0]).toMatchObject({ reward: 0.75, status: 'ok' });
      expect(body.results[1]).toMatchObject({ reward: null, status: 'error' });
      expect(body.results[1].error.code).toBe('DEADLINE_EXCEEDED');
      expect(server.service.metrics.deadlines.value()).toBe(1);
    } finally {
      release();
    }
  });

  test('with a fallback, a single late item is answered 200 with the flagged fallback', async ({ closeAfter }) => {
    const judge = gatedScript();
    const server = closeAfter(await startTestServer({ script: judge.script, service: { deadlineMs: 60, onError: { kind: 'fallback', value: 0 } } }));
    try {
      const response = await server.post('/v1/score', item('apples'));
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ reward: 0, fallback: true, status: 'error', error: { code: 'DEADLINE_EXCEEDED' } });
    } finally {
      judge.release();
    }
  });
});

describe('admission queue', () => {
  test('refuses work beyond --max-queue with 503 and Retry-After instead of queueing it, then admits again', async ({ closeAfter }) => {
    // The judge answers only once released: the queue stays full until the test says so.
    const judge = gatedScript();
    const server = closeAfter(await startTestServer({ script: judge.script, service: { maxQueue: 2 } }));
    const admitted = [server.post('/v1/score', item('apples', 'a')), server.post('/v1/score', item('pears', 'b'))];
    await vi.waitFor(() => expect(server.service.admission.used).toBe(2));
    const refused = await server.post('/v1/score', item('rotten', 'c'));
    expect(refused.status).toBe(503);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
    expect(await refused.json()).toMatchObject({ error: { code: 'OVERLOADED' } });
    // A full queue refuses before reading the body, whatever the route.
    const batchWhileFull = await server.post('/v1/score/batch', { items: [item('a')] });
    expect(batchWhileFull.status).toBe(503);
    expect(batchWhileFull.headers.get('retry-after')).not.toBeNull();
    judge.release();
    expect((await Promise.all(admitted)).map((response) => response.status)).toEqual([200, 200]);
    expect(server.service.admission.used).toBe(0);
    expect((await server.post('/v1/score', item('rotten', 'c'))).status).toBe(200);
    expect(server.service.metrics.rejected.value({ reason: 'queue_full' })).toBe(2);
    // A batch larger than the whole queue is admitted in parts (the later parts wait), never refused or zeroed.
    const batchTooBig = await server.post('/v1/score/batch', { items: [item('apples'), item('pears'), item('rotten apples')] });
    expect(batchTooBig.status).toBe(200);
    expect((await batchTooBig.json()).results.map((result: { reward: number }) => result.reward)).toEqual([0.75, 0.25, 0.25]);
  });
});

describe('admission queue over HTTP', () => {
  test('refuses on a full queue straight from the Node handler, after checking credentials', async ({ closeAfter }) => {
    // The judge answers only once the test has seen every request queued: no race with a fixed delay.
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const gated = slowScript(0);
    const server = closeAfter(await startTestServer({ script: async (request) => (await released, gated(request)), service: { maxQueue: 1 } }));
    const running = await startServer({ service: server.service, port: 0, token: 'tok' });
    try {
      const post = (body: unknown, headers: Record<string, string> = { authorization: 'Bearer tok' }) =>
        fetch(`${running.url}/v1/score`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
      const admitted = post(item('apples and pears'));
      await vi.waitFor(() => expect(server.service.admission.full).toBe(true));
      const refused = await post(item('pears'));
      expect(refused.status).toBe(503);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await refused.json()).toMatchObject({ error: { code: 'OVERLOADED' } });
      // Without credentials the answer is the 401, whatever the queue.
      expect((await post(item('pears'), {})).status).toBe(401);
      // The trainer adapters (OpenRLHF, slime) wait for room instead, and get real rewards.
      const openRlhf = fetch(`${running.url}/get_reward?token=tok`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: ['pears'], prompts: [''], labels: [fruitRubric] }) });
      await vi.waitFor(() => expect(server.service.admission.waiting).toBe(1));
      const slime = fetch(`${running.url}/slime/reward?token=tok`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'q', response: 'apples', label: fruitRubric }) });
      await vi.waitFor(() => expect(server.service.admission.waiting).toBe(2));
      release();
      expect(await (await admitted).json()).toMatchObject({ reward: 1 });
      const waited = await (await openRlhf).json();
      expect(waited).toMatchObject({ rewards: [0.25], extra_logs: { reward_failed: [0] } });
      expect(await (await slime).json()).toMatchObject({ reward: 0.75 });
      expect(server.service.metrics.rejected.value({ reason: 'queue_full' })).toBe(1);
      expect(server.service.metrics.requests.value({ route: '/v1/score', status: '503' })).toBe(1);
    } finally {
      await running.close({ drainTimeoutMs: 2_000 });
    }
  });
});

describe('probes, metrics and logs', () => {
  test('/metrics is Prometheus text: requests by route and status, latency histogram, judge calls, cache hits, errors, queue depth', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ script: (request) => (request.response === 'bad' ? { status: 500 } : { content: binaryVerdict(true) }) }));
    await server.post('/v1/score', item('apples'));
    await server.post('/v1/score', item('apples'));
    await server.post('/v1/score', item('bad'));
    await server.post('/v1/score', { prompt });
    const response = await server.app.request('/metrics');
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await response.text();
    expect(text.endsWith('\n')).toBe(true);
    const samples = new Map<string, number>();
    for (const line of text.trimEnd().split('\n')) {
      if (line.startsWith('#')) {
        expect(line).toMatch(/^# (HELP|TYPE) [a-z_]+ .+$/);
        continue;
      }
      const match = /^([a-z_]+(?:\{(?:[a-z_]+="[^"]*",?)*\})?) (-?[0-9.e+-]+|\+Inf|NaN)$/.exec(line);
      expect(match, line).not.toBeNull();
      samples.set(match![1], Number(match![2]));
    }
    expect(samples.get('rubricate_http_requests_total{route="/v1/score",status="200"}')).toBe(3);
    expect(samples.get('rubricate_http_requests_total{route="/v1/score",status="400"}')).toBe(1);
    expect(samples.get('rubricate_http_request_duration_seconds_count{route="/v1/score"}')).toBe(4);
    const buckets = [...samples.entries()].filter(([name]) => name.startsWith('rubricate_http_request_duration_seconds_bucket{route="/v1/score"')).map(([, value]) => value);
    expect(buckets.length).toBeGreaterThan(5);
    expect(buckets.every((value, index) => index === 0 || value >= buckets[index - 1])).toBe(true);
    expect(buckets.at(-1)).toBe(4);
    // Two items of 3 successful calls each (no store here); "bad" fails 2 attempts × 3 criteria with HTTP 500.
    expect(server.fake.requests).toHaveLength(12);
    expect(samples.get('rubricate_judge_calls_total')).toBe(6);
    expect(samples.get('rubricate_judge_errors_total{code="JUDGE_SERVER_ERROR"}')).toBe(6);
    expect(samples.get('rubricate_judge_retries_total')).toBe(3);
    expect(samples.get('rubricate_judge_cache_hits_total')).toBe(0);
    expect(samples.get('rubricate_items_graded_total{status="error"}')).toBe(1);
    expect(samples.get('rubricate_rewards_total{outcome="ok"}')).toBe(2);
    expect(samples.get('rubricate_rewards_total{outcome="error"}')).toBe(1);
    expect(samples.get('rubricate_queue_depth')).toBe(0);
    expect(samples.get('rubricate_queue_capacity')).toBe(4096);
  });

  test('/healthz reports ok, and 503 once the judge refused the credentials for good', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ script: () => ({ status: 401, body: { error: { message: 'bad key' } } }) }));
    const healthy = await server.app.request('/healthz');
    expect(healthy.status).toBe(200);
    expect(await healthy.json()).toMatchObject({ status: 'ok', scoring: 'weighted_mean', queue: { depth: 0, capacity: 4096 } });
    const failed = await (await server.post('/v1/score', item('apples'))).json();
    expect(failed.error.code).toBe('JUDGE_AUTH');
    const unhealthy = await server.app.request('/healthz');
    expect(unhealthy.status).toBe(503);
    expect(await unhealthy.json()).toMatchObject({ status: 'unhealthy', error: { code: 'JUDGE_AUTH' } });
  });

  test('writes one JSON log line per request', async ({ closeAfter }) => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    const server = closeAfter(await startTestServer({ app: { logger } }));
    await server.post('/v1/score/batch', { items: [item('apples'), item('pears')] });
    await server.app.request('/nowhere');
    expect(lines).toHaveLength(2);
    const [batch, missing] = lines.map((line) => {
      const parsed = safeParseJson(line);
      expect(parsed.ok).toBe(true);
      return (parsed as { value: Record<string, unknown> }).value;
    });
    expect(batch).toMatchObject({ msg: 'request', method: 'POST', route: '/v1/score/batch', status: 200, items: 2 });
    expect(typeof batch.duration_ms).toBe('number');
    expect(typeof batch.request_id).toBe('string');
    expect(missing).toMatchObject({ route: 'other', status: 404 });
  });

  test('answers unknown routes with a coded 404', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const response = await server.app.request('/v2/nothing', { method: 'POST' });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { code: 'NOT_FOUND' } });
  });
});

describe('graceful shutdown', () => {
  test('while draining, refuses new requests with 503, Retry-After and Connection: close; /healthz says draining', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const state = new ServerState();
    const app = createServerApp({ service: server.service, state });
    state.draining = true;
    const refused = await app.request('/v1/score', { method: 'POST', body: JSON.stringify(item('apples')) });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.headers.get('connection')).toBe('close');
    expect(await refused.json()).toMatchObject({ error: { code: 'OVERLOADED' } });
    const health = await app.request('/healthz');
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({ status: 'draining' });
    expect(server.fake.requests).toHaveLength(0);
  });

  test('stops accepting, finishes the requests in flight, then closes', async ({ closeAfter }) => {
    const judge = gatedScript();
    const server = closeAfter(await startTestServer({ script: judge.script }));
    const running = await startServer({ service: server.service, port: 0 });
    const inFlight = fetch(`${running.url}/v1/score`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(item('apples and pears')) });
    await vi.waitFor(() => expect(running.state.inFlightRequests).toBe(1));
    const closing = running.close({ drainTimeoutMs: 30_000 });
    // Closing has begun with the request still waiting for its judge: it must still be answered.
    await vi.waitFor(() => expect(running.state.draining).toBe(true));
    expect(running.state.inFlightRequests).toBe(1);
    judge.release();
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ reward: 1 });
    expect(await closing).toEqual({ drained: true });
    await expect(fetch(`${running.url}/healthz`)).rejects.toThrow();
  });
});
