import { describe, expect, it } from 'vitest';
import { RubricateError } from '../../errors.js';
import { ResourcePool } from './pool.js';

describe('ResourcePool', () => {
  it('lends each resource to one caller at a time and serves waiters in arrival order', async () => {
    const pool = new ResourcePool(['a', 'b']);
    const first = await pool.acquire();
    const second = await pool.acquire();
    expect(new Set([first, second])).toEqual(new Set(['a', 'b']));
    expect(pool.available).toBe(0);

    const order: string[] = [];
    const third = pool.acquire().then((resource) => order.push(`third:${resource}`));
    const fourth = pool.acquire().then((resource) => order.push(`fourth:${resource}`));
    expect(pool.waiting).toBe(2);
    pool.release(first);
    await third;
    pool.release(second);
    await fourth;
    expect(order).toEqual([`third:${first}`, `fourth:${second}`]);
    expect(pool.available).toBe(0);
  });

  it('drops a waiter whose signal aborts, without losing the resource', async () => {
    const pool = new ResourcePool([1]);
    const held = await pool.acquire();
    const controller = new AbortController();
    const waiting = pool.acquire(controller.signal);
    controller.abort(new Error('gave up'));
    await expect(waiting).rejects.toThrow('gave up');
    expect(pool.waiting).toBe(0);
    pool.release(held);
    expect(pool.available).toBe(1);
    await expect(pool.acquire(AbortSignal.abort(new Error('already')))).rejects.toThrow('already');
    expect(pool.available).toBe(1);
  });

  it('rejects waiters and new callers once closed', async () => {
    const pool = new ResourcePool([1]);
    await pool.acquire();
    const waiting = pool.acquire();
    pool.close();
    await expect(waiting).rejects.toSatisfy((error) => RubricateError.isInstance(error) && error.code === 'JUDGE_UNAVAILABLE');
    await expect(pool.acquire()).rejects.toSatisfy((error) => RubricateError.isInstance(error) && error.code === 'JUDGE_UNAVAILABLE');
  });

  it('lends the free resource the caller prefers, the most recently released on a tie', async () => {
    const pool = new ResourcePool(['short', 'long', 'none']);
    const shared: Record<string, number> = { short: 3, long: 40, none: 0 };
    expect(await pool.acquire(undefined, (resource) => shared[resource])).toBe('long');
    expect(await pool.acquire(undefined, () => 0)).toBe('none');
    pool.release('none');
    pool.release('long');
    expect(await pool.acquire(undefined, (resource) => (resource === 'short' ? 1 : 0))).toBe('short');
    expect(await pool.acquire(undefined, () => 0)).toBe('long');
  });
});
