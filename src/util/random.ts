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

/** Returns a function giving uniform floats in [0, 1), fully determined by `seed`. */
export function seededRandom(seed: number): RandomSource {
  const next = splitmix32(seed);
  let a = next();
  let b = next();
  let c = next();
  let d = next();
  return () => {
    const result = Math.imul(rotateLeft(Math.imul(b, 5) >>> 0, 7), 9) >>> 0;
    const t = (b << 9) >>> 0;
    c ^= a;
    d ^= b;
    b ^= c;
    a ^= d;
    c ^= t;
    d = rotateLeft(d, 11);
    return result / 4294967296;
  };
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
