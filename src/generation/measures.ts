/**
 * Measures used to judge rubrics: how well scores separate responses, and how alike two
 * criteria are by wording (the statistics themselves are in `src/statistics/`).
 */
import { mean, populationStd, round } from '../statistics/descriptive.js';

export interface Separation {
  /** Responses with a score (graded without error). */
  n: number;
  mean: number | null;
  std: number | null;
  range: number | null;
  /** Responses sharing the top score (1 when the best response is unique). */
  top_ties: number;
  /** Best score minus second-best score; null with fewer than two scores. */
  top2_gap: number | null;
}

/** How well a rubric's scores tell a set of responses apart. Null scores (grading errors) are left out. */
export function separation(scores: ReadonlyArray<number | null>): Separation {
  const present = scores.filter((score): score is number => score !== null && Number.isFinite(score));
  if (present.length === 0) return { n: 0, mean: null, std: null, range: null, top_ties: 0, top2_gap: null };
  const sorted = [...present].sort((first, second) => second - first);
  const top = sorted[0];
  // Floating sums of the same points can differ in the last bit; treat those as ties.
  const tolerance = 1e-9;
  return {
    n: present.length,
    mean: round(mean(present)),
    std: round(populationStd(present)),
    range: round(sorted[0] - sorted[sorted.length - 1]),
    top_ties: sorted.filter((score) => Math.abs(score - top) <= tolerance).length,
    top2_gap: sorted.length >= 2 ? round(sorted[0] - sorted[1]) : null,
  };
}

/** Lower-case word tokens (letters and digits of any script). */
export function wordTokens(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** The set of word n-grams of sizes 1..maxSize, joined by spaces. */
export function wordNgrams(text: string, maxSize = 2): Set<string> {
  const tokens = wordTokens(text);
  const grams = new Set<string>();
  for (let size = 1; size <= maxSize; size += 1) {
    for (let start = 0; start + size <= tokens.length; start += 1) grams.add(tokens.slice(start, start + size).join(' '));
  }
  return grams;
}

/** Jaccard similarity of the word uni- and bigram sets of two texts, in [0, 1]. */
export function textJaccard(first: string, second: string, maxSize = 2): number {
  const a = wordNgrams(first, maxSize);
  const b = wordNgrams(second, maxSize);
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  for (const gram of a) if (b.has(gram)) shared += 1;
  return shared / (a.size + b.size - shared);
}

/** Cosine similarity of word uni- and bigram count vectors, in [0, 1]. */
export function textCosine(first: string, second: string, maxSize = 2): number {
  const count = (text: string) => {
    const tokens = wordTokens(text);
    const counts = new Map<string, number>();
    for (let size = 1; size <= maxSize; size += 1) {
      for (let start = 0; start + size <= tokens.length; start += 1) {
        const gram = tokens.slice(start, start + size).join(' ');
        counts.set(gram, (counts.get(gram) ?? 0) + 1);
      }
    }
    return counts;
  };
  const a = count(first);
  const b = count(second);
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (const [gram, value] of a) {
    normA += value * value;
    const other = b.get(gram);
    if (other !== undefined) dot += value * other;
  }
  for (const value of b.values()) normB += value * value;
  if (normA === 0 || normB === 0) return normA === normB ? 1 : 0;
  return dot / Math.sqrt(normA * normB);
}

/** Connected components of an undirected graph over indices 0..size-1 (union–find). */
export function connectedComponents(size: number, edges: ReadonlyArray<readonly [number, number]>): number[][] {
  const parent = Array.from({ length: size }, (_, index) => index);
  const find = (node: number): number => {
    let root = node;
    while (parent[root] !== root) root = parent[root];
    while (parent[node] !== root) {
      const next = parent[node];
      parent[node] = root;
      node = next;
    }
    return root;
  };
  for (const [a, b] of edges) {
    const rootA = find(a);
    const rootB = find(b);
    // The smaller index becomes the root, so components list in a stable order.
    if (rootA !== rootB) parent[Math.max(rootA, rootB)] = Math.min(rootA, rootB);
  }
  const groups = new Map<number, number[]>();
  for (let index = 0; index < size; index += 1) {
    const root = find(index);
    const group = groups.get(root);
    if (group) group.push(index);
    else groups.set(root, [index]);
  }
  return [...groups.values()];
}
