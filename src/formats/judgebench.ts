/**
 * JudgeBench pairs (`data/dataset=judgebench,response_model=….jsonl`, also its `outputs/`
 * files, which add judgments): {pair_id, original_id, source, question, response_model,
 * response_A, response_B, label "A>B" | "B>A"}. Labels mark the objectively correct response.
 */
import { safeParseJson } from '../util/json.js';
import { readLines } from '../util/jsonl.js';
import { invalidPairRecord, isString } from './source-files.js';
import type { PairwiseImporter } from './types.js';
import type { PairwiseImportRecord } from '../rubric/records.js';
import { isRecord } from '../util/is-record.js';

function toPairRecord(text: string, file: string, line: number): PairwiseImportRecord {
  const parsed = safeParseJson(text);
  if (!parsed.ok) return invalidPairRecord(file, line, '', `not valid JSON: ${parsed.error}`);
  const row = parsed.value;
  if (!isRecord(row)) return invalidPairRecord(file, line, '', 'record must be an object');
  const id = isString(row.pair_id) || typeof row.pair_id === 'number' ? String(row.pair_id) : `judgebench-${line}`;
  if (!isString(row.question)) return invalidPairRecord(file, line, 'question', 'question must be a string', id);
  if (!isString(row.response_A)) return invalidPairRecord(file, line, 'response_A', 'response_A must be a string', id);
  if (!isString(row.response_B)) return invalidPairRecord(file, line, 'response_B', 'response_B must be a string', id);
  // JudgeBench itself only has A>B and B>A; A=B (a tie) is accepted for sets built the same way.
  const label = row.label === 'A>B' ? 'A' : row.label === 'B>A' ? 'B' : row.label === 'A=B' ? 'tie' : null;
  if (label === null) return invalidPairRecord(file, line, 'label', 'label must be "A>B", "B>A" or "A=B"', id);
  if (!isString(row.source)) return invalidPairRecord(file, line, 'source', 'source must be a string', id);
  return {
    kind: 'pair',
    line,
    pair: {
      id,
      prompt: [{ role: 'user', content: row.question }],
      responseA: row.response_A,
      responseB: row.response_B,
      label,
      source: row.source,
      metadata: {
        dataset: 'judgebench',
        line,
        ...(row.original_id !== undefined ? { originalId: row.original_id } : {}),
        ...(isString(row.response_model) ? { responseModel: row.response_model } : {}),
      },
    },
  };
}

export const judgebenchImporter: PairwiseImporter = {
  name: 'judgebench',
  description: 'JudgeBench response pairs (JSONL); label "A>B" → A, "B>A" → B ("A=B" → tie); source = source field (mmlu-pro-*, livebench-*, livecodebench).',
  async *read(source) {
    for await (const { line, text } of readLines(source)) yield toPairRecord(text, source, line);
  },
};
