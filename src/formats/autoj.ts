/**
 * Auto-J's pairwise test set as shipped by prometheus-eval (`autoj_pairwise.jsonl`, JSONL
 * despite its upstream `.json` name): {scenario, label, prompt, "response 1", "response 2"},
 * label 0 = response 1 better, 1 = response 2 better, 2 = tie. `source` is the scenario.
 */
import { safeParseJson } from '../util/json.js';
import { readLines } from '../util/jsonl.js';
import { invalidPairRecord, isString } from './source-files.js';
import type { PairLabel } from '../rubric/schema.js';
import type { PairwiseImporter } from './types.js';
import type { PairwiseImportRecord } from '../rubric/records.js';
import { isRecord } from '../util/is-record.js';

const labels: Record<number, PairLabel> = { 0: 'A', 1: 'B', 2: 'tie' };

function toPairRecord(text: string, file: string, line: number): PairwiseImportRecord {
  const id = `autoj-${line}`;
  const parsed = safeParseJson(text);
  if (!parsed.ok) return invalidPairRecord(file, line, '', `not valid JSON: ${parsed.error}`, id);
  const row = parsed.value;
  if (!isRecord(row)) return invalidPairRecord(file, line, '', 'record must be an object', id);
  if (!isString(row.prompt)) return invalidPairRecord(file, line, 'prompt', 'prompt must be a string', id);
  if (!isString(row['response 1'])) return invalidPairRecord(file, line, 'response 1', '"response 1" must be a string', id);
  if (!isString(row['response 2'])) return invalidPairRecord(file, line, 'response 2', '"response 2" must be a string', id);
  const label = typeof row.label === 'number' ? labels[row.label] : undefined;
  if (label === undefined) return invalidPairRecord(file, line, 'label', 'label must be 0 (response 1), 1 (response 2) or 2 (tie)', id);
  return {
    kind: 'pair',
    line,
    pair: {
      id,
      prompt: [{ role: 'user', content: row.prompt }],
      responseA: row['response 1'],
      responseB: row['response 2'],
      label,
      ...(isString(row.scenario) ? { source: row.scenario } : {}),
      metadata: { dataset: 'autoj', line },
    },
  };
}

export const autojImporter: PairwiseImporter = {
  name: 'autoj',
  description: 'Auto-J pairwise test set (autoj_pairwise.jsonl); label 0 → A, 1 → B, 2 → tie; source = scenario.',
  async *read(source) {
    for await (const { line, text } of readLines(source)) yield toPairRecord(text, source, line);
  },
};
