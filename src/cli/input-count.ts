/**
 * The number of records a run will produce, for the progress bar's total and the "N of M"
 * of an interrupted run. Canonical items JSONL is one record per non-blank line, counted fast
 * from the bytes; every other input (JSON documents, CSV rows that span lines, examples joined
 * with a responses file, HealthBench's examples without an ideal completion) is counted by
 * reading it through its own importer once more, so the total is exact.
 */
import { isCsvFileName } from '../util/csv.js';
import { countRecords } from './progress.js';

export interface CountableInput {
  /** The format's name (`items` is counted from its lines). */
  format: string;
  input: string;
  /** A responses file joined onto the input: the count then depends on the join. */
  responses?: string;
  /** `--shard I/N`: the run grades records I, I+N, I+2N… */
  shard?: { index: number; count: number };
  /** Reads the records as the run will (importer, shard and filters applied), with warnings silenced. */
  read(): AsyncIterable<unknown>;
}

/** Records shard I/N takes of an input of `records` records: I, I+N, I+2N… */
export function shardSize(records: number, shard: { index: number; count: number }): number {
  return Math.max(0, Math.ceil((records - shard.index) / shard.count));
}

/** Records the run will grade; rejects when the input cannot be read (the run itself reports why). */
export async function countInputRecords(input: CountableInput): Promise<number> {
  if (input.format === 'items' && !input.responses && !isCsvFileName(input.input)) {
    const lines = await countRecords(input.input);
    return input.shard ? shardSize(lines, input.shard) : lines;
  }
  let count = 0;
  for await (const _record of input.read()) count += 1;
  return count;
}
