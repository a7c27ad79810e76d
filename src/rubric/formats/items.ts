/** The canonical format: one item per JSONL line, validated as it streams. */
import { RubricateError } from '../../errors.js';
import { parseLineJson, readLines } from '../../util/jsonl.js';
import { normalizeItem } from '../normalize.js';
import type { Importer } from './types.js';

export const itemsImporter: Importer = {
  name: 'items',
  accepts: ['rubrics'],
  defaultScoring: 'weighted_mean',
  description: 'rubricate items JSONL: {id, prompt, response, rubric | rubric_id, reference?, tags?, metadata?}',
  async *read(file, options) {
    for await (const { line, text, error: lineError } of readLines(file)) {
      const parsed = parseLineJson(text, lineError);
      if (!parsed.ok) {
        yield { kind: 'invalid', line, error: new RubricateError('INPUT_INVALID', parsed.error, { file, line }) };
        continue;
      }
      const record = parsed.value;
      const id = typeof record === 'object' && record !== null && 'id' in record ? String((record as { id: unknown }).id) : undefined;
      try {
        yield { kind: 'item', line, item: normalizeItem(record, { file, line, rubrics: options.rubrics }) };
      } catch (error) {
        yield { kind: 'invalid', line, id, error: RubricateError.isInstance(error) ? error : new RubricateError('INPUT_INVALID', String(error), { file, line }) };
      }
    }
  },
};
