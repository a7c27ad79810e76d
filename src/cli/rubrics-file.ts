import { RubricateError } from '../errors.js';
import { normalizeRubric } from '../rubric/normalize.js';
import type { Rubric } from '../rubric/schema.js';
import { readJsonFile, readJsonObjects } from '../formats/shared.js';

/**
 * Rubrics by id from a JSONL file (one rubric per line) or a JSON list; each must have an id.
 * The file is read whole before anything is graded, and every item may need any rubric in it:
 * a bad one stops the run there (INPUT_UNREADABLE, exit 2: nothing was graded), naming the line.
 */
export async function loadRubrics(file: string): Promise<Map<string, Rubric>> {
  try {
    return await readRubrics(file);
  } catch (error) {
    if (!RubricateError.isInstance(error) || error.code !== 'INPUT_INVALID') throw error;
    throw new RubricateError('INPUT_UNREADABLE', `--rubrics: ${error.message}; nothing was graded: fix the rubrics file and rerun`, { field: 'rubrics', ...error.details }, { cause: error });
  }
}

async function readRubrics(file: string): Promise<Map<string, Rubric>> {
  const rubrics = new Map<string, Rubric>();
  const add = (value: unknown, line: number) => {
    if (typeof value !== 'object' || value === null || (value as { id?: unknown }).id === undefined) {
      throw new RubricateError('INPUT_INVALID', 'each rubric in a rubrics file needs an `id`', { file, line, field: 'id' });
    }
    const rubric = normalizeRubric(value, { file, line });
    if (rubrics.has(rubric.id)) throw new RubricateError('INPUT_INVALID', `duplicate rubric id "${rubric.id}"`, { file, line, field: 'id' });
    rubrics.set(rubric.id, rubric);
  };
  if (file.endsWith('.json')) {
    const document = await readJsonFile(file);
    if (!Array.isArray(document)) throw new RubricateError('INPUT_INVALID', 'a .json rubrics file must hold a list of rubrics', { file });
    document.forEach((value, index) => add(value, index + 1));
  } else {
    for await (const entry of readJsonObjects(file)) {
      if ('error' in entry) throw entry.error;
      add(entry.value, entry.line);
    }
  }
  return rubrics;
}
