/**
 * RubricHub's multi-generator merge: the criteria several generators (or several samples of one)
 * wrote for the same task, merged into one list. The dedup is conservative: two criteria are one
 * only when their wording is the same (case, spacing, final punctuation aside) or nearly the same
 * (word uni- and bigram Jaccard ≥ 0.9, stricter than the generator's own 0.8 duplicate threshold),
 * and they score in the same direction. Of duplicates the one with the higher points (in
 * magnitude: the stronger weight) is kept; every kept criterion's points are clamped to the
 * declared range, and its provenance lists every source it came from.
 */
import type { CriterionInput } from '../rubric/schema.js';
import { comparableText } from './criteria.js';
import { textJaccard } from './measures.js';

/** One generator's (or sample's) criteria, with the name its provenance records. */
export interface MergeSource {
  /** Who wrote them: a generator id, optionally with a sample (`openai:gpt-4.1#1`). */
  source: string;
  criteria: readonly CriterionInput[];
}

export interface MergeOptions {
  /** Points a merged criterion may carry: positive points at most `max`, negative points at least `min` (a sign never changes). */
  range: { min: number; max: number };
  /** Jaccard at or above which two same-direction criteria are one (default 0.9). */
  nearDuplicate?: number;
}

/** What a merged criterion's `metadata.merge` records. */
export interface MergeProvenance {
  sources: string[];
  /** Texts folded into this one (duplicates of it), with their points. */
  merged: Array<{ source: string; text: string; points: number }>;
  /** The points before clamping, when they were outside the range. */
  clamped_from?: number;
}

export interface MergeResult {
  criteria: CriterionInput[];
  /** Criteria folded into another (each counted once). */
  duplicates: number;
  clamped: number;
}

export const defaultNearDuplicate = 0.9;

export function mergeCriteria(sources: readonly MergeSource[], options: MergeOptions): MergeResult {
  const threshold = options.nearDuplicate ?? defaultNearDuplicate;
  const kept: Array<{ criterion: CriterionInput; provenance: MergeProvenance }> = [];
  let duplicates = 0;
  for (const { source, criteria } of sources) {
    for (const criterion of criteria) {
      const same = kept.find((entry) => isDuplicate(entry.criterion, criterion, threshold));
      if (same === undefined) {
        kept.push({ criterion: { ...criterion }, provenance: { sources: [source], merged: [] } });
        continue;
      }
      duplicates += 1;
      if (!same.provenance.sources.includes(source)) same.provenance.sources.push(source);
      if (Math.abs(points(criterion)) > Math.abs(points(same.criterion))) {
        same.provenance.merged.push({ source: same.provenance.sources[0], text: same.criterion.text, points: points(same.criterion) });
        same.criterion = { ...criterion };
      } else {
        same.provenance.merged.push({ source, text: criterion.text, points: points(criterion) });
      }
    }
  }
  let clamped = 0;
  const merged = kept.map(({ criterion, provenance }) => {
    const value = points(criterion);
    const limited = clampPoints(value, options.range);
    if (limited !== value) {
      clamped += 1;
      provenance.clamped_from = value;
    }
    return { ...criterion, points: limited, metadata: { ...criterion.metadata, merge: provenance } };
  });
  return { criteria: merged, duplicates, clamped };
}

function points(criterion: CriterionInput): number {
  return criterion.points ?? 1;
}

function isDuplicate(first: CriterionInput, second: CriterionInput, threshold: number): boolean {
  if (Math.sign(points(first)) !== Math.sign(points(second))) return false;
  if (comparableText(first.text) === comparableText(second.text)) return true;
  return textJaccard(first.text, second.text) >= threshold;
}

/** Positive points stay positive and negative stay negative: the range bounds their size, never their direction. */
export function clampPoints(value: number, range: { min: number; max: number }): number {
  if (value > 0) return Math.min(value, Math.max(range.max, Number.MIN_VALUE));
  if (value < 0) return Math.max(value, Math.min(range.min, -Number.MIN_VALUE));
  return value;
}
