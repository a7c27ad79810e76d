/**
 * Prefix cache model, in the manner of server-side prompt caching (vLLM's automatic prefix
 * caching, OpenAI's prompt caching): the prompt is cut into whole blocks of `blockTokens`
 * tokens; each block is identified by a hash chained over all tokens before it, so a block
 * hits only when the whole prefix up to its end was seen before. Known blocks live in an LRU
 * of `capacityBlocks` entries.
 */

export interface PrefixLookup {
  /** Leading tokens served from the cache (a whole number of blocks). */
  cachedTokens: number;
  /** Full blocks in the prompt that can be cached. */
  blocks: number;
}

export class PrefixCache {
  private readonly known = new Map<number, true>();

  constructor(
    readonly blockTokens: number,
    readonly capacityBlocks: number,
  ) {
    if (!Number.isInteger(blockTokens) || blockTokens < 1) throw new RangeError('prefix block size must be a positive integer');
    if (!Number.isInteger(capacityBlocks) || capacityBlocks < 0) throw new RangeError('prefix cache capacity must be a non-negative integer');
  }

  get size(): number {
    return this.known.size;
  }

  clear(): void {
    this.known.clear();
  }

  /**
   * Counts the cached leading blocks of `tokens`, then records all of its blocks as seen
   * (the prompt has now been processed, so its prefix is reusable by later requests).
   * The last prompt token is never served from cache, as real servers always compute it.
   */
  lookupAndInsert(tokens: readonly number[]): PrefixLookup {
    const cacheableTokens = Math.max(0, tokens.length - 1);
    const blocks = Math.floor(cacheableTokens / this.blockTokens);
    let cachedBlocks = 0;
    let stillMatching = true;
    // Two independent 32-bit hashes chained over the prefix give a 53-bit key per block.
    let first = 0x811c9dc5;
    let second = 0x01000193;
    for (let block = 0; block < blocks; block += 1) {
      const start = block * this.blockTokens;
      const end = start + this.blockTokens;
      for (let index = start; index < end; index += 1) {
        const token = tokens[index];
        first = Math.imul(first ^ token, 0x01000193);
        second = Math.imul((second + token) ^ (second >>> 15), 0x2c1b3c6d);
      }
      const key = (first >>> 0) * 0x200000 + ((second >>> 0) & 0x1fffff);
      if (stillMatching && this.known.has(key)) {
        cachedBlocks += 1;
        // Refresh recency: Map iteration order is insertion order, so re-inserting marks it newest.
        this.known.delete(key);
        this.known.set(key, true);
      } else {
        stillMatching = false;
        this.remember(key);
      }
    }
    return { cachedTokens: cachedBlocks * this.blockTokens, blocks };
  }

  private remember(key: number): void {
    if (this.capacityBlocks === 0) return;
    if (this.known.has(key)) {
      this.known.delete(key);
    } else if (this.known.size >= this.capacityBlocks) {
      const oldest = this.known.keys().next();
      if (!oldest.done) this.known.delete(oldest.value);
    }
    this.known.set(key, true);
  }
}
