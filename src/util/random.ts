/**
 * Seeded pseudo-random numbers (xoshiro128**, seeded through splitmix32), so bootstraps
 * and shuffles give the same numbers on every run and machine.
 */
export type RandomSource = () => number;

function splitmix32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/**
 * xoshiro128** state. `next()` gives uniform floats in [0, 1); `fillIndices` draws many
 * uniform integers in one tight loop (bootstraps draw a million) and gives exactly the
 * numbers the same count of `randomInteger(next, bound)` calls would.
 */
export class SeededGenerator {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    const next = splitmix32(seed);
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
  }

  next(): number {
    const result = Math.imul(rotateLeft(Math.imul(this.b, 5) >>> 0, 7), 9) >>> 0;
    const t = (this.b << 9) >>> 0;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotateLeft(this.d, 11);
    return result / 4294967296;
  }

  /** Fills `target` with uniform integers in [0, bound). */
  fillIndices(target: Int32Array | Uint32Array, bound: number): void {
    let { a, b, c, d } = this;
    for (let index = 0; index < target.length; index += 1) {
      const rotated = Math.imul(b, 5) >>> 0;
      const result = Math.imul(((rotated << 7) | (rotated >>> 25)) >>> 0, 9) >>> 0;
      const t = (b << 9) >>> 0;
      c ^= a;
      d ^= b;
      b ^= c;
      a ^= d;
      c ^= t;
      d = ((d << 11) | (d >>> 21)) >>> 0;
      target[index] = Math.floor((result / 4294967296) * bound);
    }
    this.a = a;
    this.b = b;
    this.c = c;
    this.d = d;
  }
}

/** Returns a function giving uniform floats in [0, 1), fully determined by `seed`. */
export function seededRandom(seed: number): RandomSource {
  const generator = new SeededGenerator(seed);
  return () => generator.next();
}

function rotateLeft(value: number, bits: number): number {
  return ((value << bits) | (value >>> (32 - bits))) >>> 0;
}

/** Uniform integer in [0, bound). */
export function randomInteger(random: RandomSource, bound: number): number {
  return Math.floor(random() * bound);
}

/** Fisher–Yates shuffle of a copy. */
export function shuffled<T>(values: readonly T[], random: RandomSource): T[] {
  const copy = values.slice();
  for (let index = copy.length - 1; index > 0; index -= 1) {
    const swap = randomInteger(random, index + 1);
    [copy[index], copy[swap]] = [copy[swap], copy[index]];
  }
  return copy;
}
