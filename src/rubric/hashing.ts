import { canonicalJson } from '../util/json.js';
import { sha256Hex } from '../util/hash.js';
import type { Rubric } from './schema.js';

/** Canonical JSON of a rubric: sorted keys, no whitespace, the rubric `id` left out. */
export function canonicalRubricJson(rubric: Rubric): string {
  const { id: _id, ...content } = rubric;
  return canonicalJson(content);
}

/**
 * Content hash of a rubric, used in cache keys and in results provenance. The id is
 * excluded so the same criteria under another name hash alike (and a derived id can be
 * computed from the hash).
 *
 * @example
 * ```ts
 * import { normalizeRubric, rubricHash } from 'rubricate';
 * const hash = rubricHash(normalizeRubric({ criteria: [{ text: 'Cites a source' }] }));
 * ```
 */
export function rubricHash(rubric: Rubric): string {
  return sha256Hex(canonicalRubricJson(rubric));
}

const hashMemo = new WeakMap<Rubric, string>();

/** rubricHash memoised per rubric object (rubrics shared by many items are hashed once). */
export function memoizedRubricHash(rubric: Rubric): string {
  let hash = hashMemo.get(rubric);
  if (hash === undefined) {
    hash = rubricHash(rubric);
    hashMemo.set(rubric, hash);
  }
  return hash;
}
