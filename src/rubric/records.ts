/**
 * What a reader yields for each record of an input: the record, or the reason a line could
 * not become one. Every reader (importers, results, labels, prompts, compare files) shares
 * `InvalidRecord`, so a bad line is reported the same way everywhere and the run continues.
 */
import type { RubricateError } from '../errors.js';
import type { BestOfNItem, Item, PairwiseItem } from './schema.js';

/** A line that could not be read as a record: the error names file, line and field. */
export interface InvalidRecord {
  kind: 'invalid';
  error: RubricateError;
  line: number;
  /** The record's id, when it could still be read. */
  id?: string;
}

/** One record read from an item input: an item, or the reason a line could not become one. */
export type ImportRecord = { kind: 'item'; item: Item; line: number; /** Read with `withoutResponses`: the record had no response. */ withoutResponse?: true } | InvalidRecord;

/** One record read from a pairwise input. */
export type PairwiseImportRecord = { kind: 'pair'; pair: PairwiseItem; line: number } | InvalidRecord;

/** One record read from a best-of-N input. */
export type BestOfNImportRecord = { kind: 'set'; set: BestOfNItem; line: number } | InvalidRecord;
