/**
 * PandaLM's human-annotated test set (`testset-v1.json`): [{idx, motivation_app, cmp_key,
 * instruction, input, response1, response2, annotator1..3}], each annotator voting 1
 * (response 1 better), 2 (response 2 better) or 0 (tie).
 *
 * Gold label: the value at least two of the three annotators chose (a majority of ties is a
 * tie); when all three differ (one each of 1, 2 and 0) there is no majority and the pair is
 * labelled `tie`. The prompt is the instruction, followed by the input after a blank line
 * when there is one. `source` is the application the instruction was written for.
 */
import { invalidPairRecord, isString, readJsonArrayFile } from './source-files.js';
import type { PairLabel } from '../rubric/schema.js';
import type { PairwiseImporter } from './types.js';
import type { PairwiseImportRecord } from '../rubric/records.js';
import { isRecord } from '../util/is-record.js';

const voteLabels: Record<number, PairLabel> = { 0: 'tie', 1: 'A', 2: 'B' };

/** Majority of three votes; a three-way split is a tie. Exported for tests and docs. */
export function pandalmMajority(votes: readonly (0 | 1 | 2)[]): { label: PairLabel; rule: 'majority' | 'three-way split' } {
  const counts = new Map<number, number>();
  for (const vote of votes) counts.set(vote, (counts.get(vote) ?? 0) + 1);
  for (const [vote, count] of counts) if (count * 2 > votes.length) return { label: voteLabels[vote], rule: 'majority' };
  return { label: 'tie', rule: 'three-way split' };
}

/**
 * A response's text. A few rows of the published file hold the JSON booleans true/false where
 * the model answered "True" / "False" (a YAML-style conversion upstream); they are turned back
 * into those words (as Python would print them) rather than dropped, and flagged in metadata.
 */
function responseText(value: unknown): { text: string; coerced: boolean } | null {
  if (isString(value)) return { text: value, coerced: false };
  if (typeof value === 'boolean') return { text: value ? 'True' : 'False', coerced: true };
  if (typeof value === 'number' && Number.isFinite(value)) return { text: String(value), coerced: true };
  return null;
}

function toPairRecord(row: unknown, file: string, line: number): PairwiseImportRecord {
  if (!isRecord(row)) return invalidPairRecord(file, line, '', 'record must be an object');
  const id = typeof row.idx === 'number' || typeof row.idx === 'string' ? `pandalm-${row.idx}` : `pandalm-record-${line}`;
  if (!isString(row.instruction)) return invalidPairRecord(file, line, 'instruction', 'instruction must be a string', id);
  if (row.input !== undefined && row.input !== null && !isString(row.input)) return invalidPairRecord(file, line, 'input', 'input must be a string', id);
  const response1 = responseText(row.response1);
  if (response1 === null) return invalidPairRecord(file, line, 'response1', 'response1 must be a string', id);
  const response2 = responseText(row.response2);
  if (response2 === null) return invalidPairRecord(file, line, 'response2', 'response2 must be a string', id);
  const votes: (0 | 1 | 2)[] = [];
  for (const field of ['annotator1', 'annotator2', 'annotator3']) {
    const vote = row[field];
    if (vote !== 0 && vote !== 1 && vote !== 2) return invalidPairRecord(file, line, field, `${field} must be 0 (tie), 1 or 2`, id);
    votes.push(vote);
  }
  const input = isString(row.input) ? row.input : '';
  const { label, rule } = pandalmMajority(votes);
  return {
    kind: 'pair',
    line,
    pair: {
      id,
      prompt: [{ role: 'user', content: input.trim() === '' ? row.instruction : `${row.instruction}\n\n${input}` }],
      responseA: response1.text,
      responseB: response2.text,
      label,
      ...(isString(row.motivation_app) ? { source: row.motivation_app } : {}),
      metadata: {
        dataset: 'pandalm',
        record: line,
        ...(row.idx !== undefined ? { idx: row.idx } : {}),
        ...(isString(row.cmp_key) ? { comparedModels: row.cmp_key } : {}),
        instruction: row.instruction,
        input,
        annotators: votes,
        labelRule: rule,
        ...(response1.coerced || response2.coerced
          ? { coercedResponses: [response1.coerced ? 'response1' : null, response2.coerced ? 'response2' : null].filter(Boolean) }
          : {}),
      },
    },
  };
}

export const pandalmImporter: PairwiseImporter = {
  name: 'pandalm',
  description: 'PandaLM human-annotated test set (testset-v1.json); label = majority of three annotators, three-way split → tie; source = motivation_app.',
  async *read(source) {
    const rows = await readJsonArrayFile(source);
    for (let index = 0; index < rows.length; index += 1) yield toPairRecord(rows[index], source, index + 1);
  },
};
