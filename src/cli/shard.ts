/**
 * What ties the outputs of `grade --shard I/N` together: every line carries its shard, the whole
 * input's record count and the input's identity (a hash of the input files' bytes and of how they
 * are read), so that `merge` can tell the complete shards of one run from a missing, cut-short or
 * foreign one. `merge` drops the stamp again: merged shards are the unsharded run, byte for byte.
 */
import type { ResultRecord, ShardStamp } from '../results/results.js';
import { hashValue, sha256OfFile } from '../util/hash.js';
import type { InputFlags } from './input-options.js';

/** The stamp of shard `shard` of an input of `records` records, read as `format`. */
export async function shardStampFor(flags: InputFlags, format: string, shard: { index: number; count: number }, records: number): Promise<ShardStamp> {
  const files: Record<string, string> = {};
  const named = { input: flags.input, responses: flags.responses, rubrics: flags.rubrics, examples: flags.examples };
  for (const [name, path] of Object.entries(named)) if (path) files[name] = await sha256OfFile(path);
  return { index: shard.index, count: shard.count, records, input_sha256: hashValue({ format, response_from: flags.responseFrom ?? null, files }) };
}

/** The results with the shard's stamp on every line (unchanged without one). */
export async function* withShardStamp(results: AsyncIterable<ResultRecord>, stamp: ShardStamp | undefined): AsyncGenerator<ResultRecord> {
  for await (const result of results) yield stamp ? { ...result, shard: stamp } : result;
}
