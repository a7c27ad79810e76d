/**
 * LLMBar pairwise sets: `dataset.json` = [{input, output_1, output_2, label: 1 | 2}]. The
 * subset comes from the folders (`LLMBar/Natural`, `LLMBar/Adversarial/GPTInst`,
 * `Processed/MT-Bench`, …). Given a folder, every `dataset.json` below it is read, in path
 * order, skipping judges' `evaluators/` folders.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { RubricateError } from '../errors.js';
import { invalidPairRecord, isString, llmbarSubsetFromPath, readJsonArrayFile } from './source-files.js';
import type { PairwiseImporter } from './types.js';
import type { PairwiseImportRecord } from '../rubric/records.js';
import { isRecord } from '../util/is-record.js';

async function datasetFiles(source: string): Promise<string[]> {
  let info;
  try {
    info = await stat(source);
  } catch (error) {
    throw new RubricateError('INPUT_INVALID', 'file not found', { file: source }, { cause: error });
  }
  if (!info.isDirectory()) return [source];
  const entries = await readdir(source, { recursive: true });
  const files = entries
    .map((entry) => path.join(source, entry))
    .filter((file) => path.basename(file) === 'dataset.json' && !file.split(path.sep).includes('evaluators'))
    .sort();
  if (files.length === 0) throw new RubricateError('INPUT_INVALID', 'no dataset.json found in this folder', { file: source });
  return files;
}

function toPairRecord(row: unknown, file: string, line: number, subset: string): PairwiseImportRecord {
  const id = `${subset}/${line}`;
  if (!isRecord(row)) return invalidPairRecord(file, line, '', 'record must be an object', id);
  if (!isString(row.input)) return invalidPairRecord(file, line, 'input', 'input must be a string', id);
  if (!isString(row.output_1)) return invalidPairRecord(file, line, 'output_1', 'output_1 must be a string', id);
  if (!isString(row.output_2)) return invalidPairRecord(file, line, 'output_2', 'output_2 must be a string', id);
  const label = row.label === 1 || row.label === '1' ? 'A' : row.label === 2 || row.label === '2' ? 'B' : null;
  if (label === null) return invalidPairRecord(file, line, 'label', 'label must be 1 or 2', id);
  return {
    kind: 'pair',
    line,
    pair: {
      id,
      prompt: [{ role: 'user', content: row.input }],
      responseA: row.output_1,
      responseB: row.output_2,
      label,
      source: subset,
      metadata: { dataset: 'llmbar', record: line },
    },
  };
}

export const llmbarImporter: PairwiseImporter = {
  name: 'llmbar',
  description: 'LLMBar pairwise instruction-following sets (dataset.json, or a folder of them); label 1 → A, 2 → B; source = subset folder.',
  async *read(source) {
    for (const file of await datasetFiles(source)) {
      const rows = await readJsonArrayFile(file);
      const subset = llmbarSubsetFromPath(file);
      // Records are numbered from 1 so `line` reads like a line number in messages.
      for (let index = 0; index < rows.length; index += 1) yield toPairRecord(rows[index], file, index + 1, subset);
    }
  },
};
