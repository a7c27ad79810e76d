/**
 * What an export reads from results files: the graded responses that may become training data,
 * and a tally of every one left out and why. An item in error, invalid or unscorable is never
 * data: its score is not a measurement.
 */
import { RubricateError } from '../errors.js';
import { readResults, type ResultRecord } from '../results/results.js';
import type { Message } from '../rubric/schema.js';
import { sha256Hex } from '../util/hash.js';
import { canonicalJson } from '../util/json.js';
import { madeUpBy } from '../util/made-up.js';

/** One graded response fit to train on: its prompt as chat messages, its response text, its score. */
export interface Candidate {
  id: string;
  /** `file:line` of the results line it came from. */
  source: string;
  prompt: Message[];
  response: string;
  score: number;
  record: ResultRecord;
  /** Who made its verdicts up (`--allow-scripted` only: otherwise such a record stops the export). */
  scripted?: string;
}

/** Made-up verdicts are refused as training data unless the export allows them (`--allow-scripted`), each row then marked. */
export interface ScriptedPolicy {
  allow: boolean;
}

/** Why records were left out, with counts, in the order first met. */
export class LeftOut {
  private readonly counts = new Map<string, number>();

  add(reason: string, count = 1): void {
    this.counts.set(reason, (this.counts.get(reason) ?? 0) + count);
  }

  get total(): number {
    return [...this.counts.values()].reduce((sum, count) => sum + count, 0);
  }

  entries(): Array<{ reason: string; count: number }> {
    return [...this.counts].map(([reason, count]) => ({ reason, count }));
  }
}

/** Why a graded record cannot be training data, or undefined when it can. */
export function unusable(record: ResultRecord): string | undefined {
  if (record.status !== 'ok') return `item ${record.status === 'error' ? 'in error' : record.status} (its score is not a measurement)`;
  if (record.score === null || record.score === undefined) return 'item unscorable';
  if (record.prompt === undefined || record.response === undefined) return 'results written without texts (--no-text)';
  if (record.step_offsets !== undefined) return 'response is an agent trajectory, not one assistant message';
  if (record.images !== undefined && record.images.length > 0) return 'item has images';
  return undefined;
}

/**
 * Every usable record of the files, in file order; the others are counted in `leftOut` (and bad
 * lines reported to `onInvalid`, naming file and line).
 */
export async function* readCandidates(files: readonly string[], leftOut: LeftOut, onInvalid: (error: RubricateError) => void, scripted: ScriptedPolicy = { allow: false }): AsyncGenerator<Candidate> {
  for (const file of files) {
    for await (const read of readResults(file)) {
      if (read.kind === 'invalid') {
        onInvalid(read.error);
        leftOut.add('invalid results line');
        continue;
      }
      const reason = unusable(read.record);
      if (reason) {
        leftOut.add(reason);
        continue;
      }
      const record = read.record;
      const madeUp = madeUpBy(record);
      if (madeUp && !scripted.allow) {
        throw new RubricateError(
          'SCRIPTED_VERDICTS_REFUSED',
          `${file}:${read.line}: the verdicts are made up (${madeUp}), not a model's: training on them teaches nothing real. Nothing was written; pass --allow-scripted to export them anyway (each row then says "scripted": true)`,
          { file, line: read.line },
        );
      }
      yield { id: record.id, source: `${file}:${read.line}`, prompt: record.prompt as Message[], response: record.response!, score: record.score!, record, ...(madeUp ? { scripted: madeUp } : {}) };
    }
  }
}

/** The value at a dot path of a record (`metadata.prompt_id`), as a group key. */
function valueAt(record: ResultRecord, path: string): unknown {
  let value: unknown = record;
  for (const key of path.split('.')) value = value !== null && typeof value === 'object' && Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
  return value;
}

/**
 * Candidates grouped by prompt: the same prompt messages (default), or the same value at
 * `groupBy`. Groups keep their first appearance's order, candidates their file order.
 */
export async function groupByPrompt(candidates: AsyncIterable<Candidate>, groupBy: string | undefined, leftOut: LeftOut): Promise<Candidate[][]> {
  const groups = new Map<string, Candidate[]>();
  for await (const candidate of candidates) {
    const value = groupBy === undefined ? candidate.prompt : valueAt(candidate.record, groupBy);
    if (value === undefined) {
      leftOut.add(`no ${groupBy} to group by`);
      continue;
    }
    const key = sha256Hex(canonicalJson(value));
    const group = groups.get(key);
    if (group) group.push(candidate);
    else groups.set(key, [candidate]);
  }
  return [...groups.values()];
}
