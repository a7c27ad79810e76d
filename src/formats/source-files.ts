/**
 * Reading helpers shared by the pairwise importers and the published-judge readers of
 * `src/meta/published/` (which read the same LLMBar trees).
 */
import path from 'node:path';
import { RubricateError } from '../errors.js';
import { readJsonFile, readJsonObjects } from './shared.js';
import type { PairwiseImportRecord } from '../rubric/records.js';

/** Reads a JSON file whose top level must be an array. */
export async function readJsonArrayFile(file: string): Promise<unknown[]> {
  const value = await readJsonFile(file);
  if (!Array.isArray(value)) throw new RubricateError('INPUT_INVALID', 'expected a JSON array of records', { file });
  return value;
}

/**
 * The rows of a benchmark published both ways: a `.json` file holding one array (a row's "line"
 * is its place in it, from 1), else JSONL (or CSV) read line by line.
 */
export async function* readRows(file: string): AsyncGenerator<{ line: number; value: unknown } | { line: number; error: RubricateError }> {
  if (!file.toLowerCase().endsWith('.json')) {
    yield* readJsonObjects(file);
    return;
  }
  const rows = await readJsonArrayFile(file);
  for (const [index, value] of rows.entries()) yield { line: index + 1, value };
}

/** Folder names that start an LLMBar subset path inside its `Dataset/` tree. */
const llmbarRoots = ['LLMBar', 'Processed', 'CaseStudy'];

/**
 * The LLMBar subset a file belongs to, from its folders: `…/LLMBar/Adversarial/GPTInst/dataset.json`
 * → `LLMBar/Adversarial/GPTInst`; a judge's `…/Natural/evaluators/GPT-4/CoT/result.json`
 * → `LLMBar/Natural`. Outside the usual tree, the name of the folder holding the dataset.
 */
export function llmbarSubsetFromPath(file: string): string {
  const segments = path.resolve(file).split(path.sep).filter((segment) => segment !== '');
  segments.pop();
  const evaluatorsAt = segments.lastIndexOf('evaluators');
  const datasetSegments = evaluatorsAt >= 0 ? segments.slice(0, evaluatorsAt) : segments;
  let rootAt = -1;
  for (const root of llmbarRoots) rootAt = Math.max(rootAt, datasetSegments.lastIndexOf(root));
  if (rootAt >= 0) return datasetSegments.slice(rootAt).join('/');
  return datasetSegments[datasetSegments.length - 1] ?? 'LLMBar';
}

/** The `invalid` record an importer yields for a row it cannot use. */
export function invalidPairRecord(file: string, line: number, field: string, message: string, id?: string): PairwiseImportRecord {
  const error = new RubricateError('INPUT_INVALID', message, { file, line, field, ...(id !== undefined ? { id } : {}) });
  return { kind: 'invalid', error, line, ...(id !== undefined ? { id } : {}) };
}

/** A string field that must be present (empty strings allowed: an empty response is still a response). */
export function isString(value: unknown): value is string {
  return typeof value === 'string';
}
