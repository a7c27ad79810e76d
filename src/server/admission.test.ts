import { describe, expect, it } from 'vitest';
import { RubricateError } from '../errors.js';
import { AdmissionQueue, admissionWarning } from './admission.js';
import { Counter, Histogram, MetricsRegistry } from './metrics.js';

describe('AdmissionQueue', () => {
  it('admits up to capacity, refuses beyond with OVERLOADED, and admits again after release', async () => {
    const queue = new AdmissionQueue(3);
    await queue.admit(2);
    expect(queue.full).toBe(false);
    const refused = await queue.admit(2).catch((error: unknown) => error);
    expect(RubricateError.isInstance(refused) && refused.code).toBe('OVERLOADED');
    expect((refused as RubricateError).details.retryAfterMs).toBeGreaterThanOrEqual(1000);
    await queue.admit(1);
    expect(queue.full).toBe(true);
    queue.release(2);
    await queue.admit(2);
    expect(queue.used).toBe(3);
  });

  it('lets waiting requests in, first come first served, as room frees up', async () => {
    const queue = new AdmissionQueue(2, { waitingCapacity: 3 });
    await queue.admit(2);
    const order: string[] = [];
    const first = queue.admit(2, { wait: true }).then(() => order.push('first'));
    const second = queue.admit(1, { wait: true }).then(() => order.push('second'));
    expect(queue.waiting).toBe(3);
    // The waiting line is full: a third waiter is refused at once.
    await expect(queue.admit(1, { wait: true })).rejects.toThrowError(/admission queue is full/);
    queue.release(1);
    await Promise.resolve();
    // One slot free: the head needs two, and the one behind it does not jump the line.
    expect(order).toEqual([]);
    queue.release(1);
    await first;
    expect(order).toEqual(['first']);
    queue.release(2);
    await second;
    expect(order).toEqual(['first', 'second']);
    expect(queue.waiting).toBe(0);
  });

  it('gives up waiting at the deadline with OVERLOADED and Retry-After: a refusal for load, not a failure', async () => {
    const queue = new AdmissionQueue(1);
    await queue.admit(1);
    const started = Date.now();
    const error = await queue.admit(1, { wait: true, deadlineAt: Date.now() + 40 }).catch((thrown: unknown) => thrown);
    expect(Date.now() - started).toBeGreaterThanOrEqual(35);
    expect((error as RubricateError).code).toBe('OVERLOADED');
    expect((error as RubricateError).details.retryAfterMs).toBeGreaterThanOrEqual(1000);
    expect(queue.waiting).toBe(0);
  });

  it('never takes a part larger than the whole queue (callers admit large requests in parts)', async () => {
    await expect(new AdmissionQueue(4).admit(5)).rejects.toThrowError(/admit it in parts/);
  });

  it('waits by default for a full trainer step (4,096 items); past the line, refuses unless the request may be held', async () => {
    expect(new AdmissionQueue(64).waitingCapacity).toBe(4096);
    const queue = new AdmissionQueue(1, { waitingCapacity: 1 });
    await queue.admit(1);
    const waiting = queue.admit(1, { wait: true });
    expect(queue.waiting).toBe(1);
    await expect(queue.admit(1, { wait: true })).rejects.toMatchObject({ code: 'OVERLOADED' });
    // A trainer request is held behind the full line, in order, and moves up as it frees.
    const order: string[] = [];
    const held = [queue.admit(1, { wait: true, hold: true }).then(() => order.push('first held')), queue.admit(1, { wait: true, hold: true }).then(() => order.push('second held'))];
    expect(queue.heldCount).toBe(2);
    queue.release(1);
    await waiting;
    expect([queue.waiting, queue.heldCount]).toEqual([1, 1]);
    queue.release(1);
    queue.release(1);
    await Promise.all(held);
    expect(order).toEqual(['first held', 'second held']);
    expect([queue.used, queue.waiting, queue.heldCount]).toEqual([1, 0, 0]);
  });

  it('a held request gives up at its deadline with OVERLOADED, and the line behind it moves on', async () => {
    const queue = new AdmissionQueue(1, { waitingCapacity: 0 });
    await queue.admit(1);
    const first = queue.admit(1, { wait: true, hold: true, deadlineAt: Date.now() + 20 });
    const second = queue.admit(1, { wait: true, hold: true });
    await expect(first).rejects.toMatchObject({ code: 'OVERLOADED' });
    queue.release(1);
    await second;
    expect([queue.used, queue.heldCount]).toEqual([1, 0]);
  });

  it('warns when a trainer step is larger than queue + line, naming the shortfall and the fix', () => {
    expect(admissionWarning(4096, 4096, 8192)).toBeUndefined();
    expect(admissionWarning(4096, 4096, undefined)).toBeUndefined();
    const warning = admissionWarning(4096, 4096, 1024 * 16);
    expect(warning).toContain('8192 requests of each step will be held open');
    expect(warning).toContain('--max-waiting to 12288');
  });

  it('estimates Retry-After from recent throughput', async () => {
    let clock = 100_000;
    const queue = new AdmissionQueue(10, { now: () => clock });
    await queue.admit(10);
    // Nothing finished yet: the default estimate.
    expect(queue.retryAfterSeconds(1)).toBe(2);
    queue.release(5);
    await queue.admit(5);
    clock += 1000;
    // 5 items per 10 s window = 0.5 items/s; 4 more items beyond capacity → 8 s.
    expect(queue.throughput()).toBeCloseTo(0.5, 10);
    expect(queue.retryAfterSeconds(4)).toBe(8);
    clock += 11_000;
    expect(queue.throughput()).toBe(0);
  });

  it('idle() resolves once everything admitted is released', async () => {
    const queue = new AdmissionQueue(2);
    await queue.admit(2);
    let idle = false;
    const waiting = queue.idle().then(() => {
      idle = true;
    });
    queue.release(1);
    await Promise.resolve();
    expect(idle).toBe(false);
    queue.release(1);
    await waiting;
    expect(idle).toBe(true);
  });
});

describe('Prometheus rendering', () => {
  it('escapes label values and renders cumulative histogram buckets', () => {
    const registry = new MetricsRegistry();
    const counter = registry.register(new Counter('test_total', 'A "test" counter.\nSecond line.', ['route']));
    counter.inc({ route: 'a"b\\c\nd' }, 2);
    const histogram = registry.register(new Histogram('test_seconds', 'Latency.', [0.1, 1], ['route']));
    for (const value of [0.05, 0.5, 0.7, 5]) histogram.observe({ route: 'x' }, value);
    expect(registry.render()).toBe(
      [
        '# HELP test_total A "test" counter.\\nSecond line.',
        '# TYPE test_total counter',
        'test_total{route="a\\"b\\\\c\\nd"} 2',
        '# HELP test_seconds Latency.',
        '# TYPE test_seconds histogram',
        'test_seconds_bucket{route="x",le="0.1"} 1',
        'test_seconds_bucket{route="x",le="1"} 3',
        'test_seconds_bucket{route="x",le="+Inf"} 4',
        'test_seconds_sum{route="x"} 6.25',
        'test_seconds_count{route="x"} 4',
        '',
      ].join('\n'),
    );
  });
});
