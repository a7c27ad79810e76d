/**
 * RewardBench 2 (allenai/reward-bench-2, its `test` split as JSONL or a JSON array): each row is
 * `{id, prompt, chosen: [...], rejected: [...], num_correct, num_rejected, total_completions,
 * models, subset}`. A row becomes a best-of-N set whose responses are the chosen ones, then the
 * rejected ones (the reference's order: the correct ones first). Every subset but Ties has one
 * chosen and three rejected responses; Ties rows (ids `ref:N` and `tied:N`) have several of each.
 * The counts, when given, must agree with the lists.
 */
import { z } from 'zod';
import { zodErrorToInputError } from '../rubric/normalize.js';
import { RubricateError } from '../errors.js';
import type { BestOfNImportRecord } from '../rubric/records.js';
import { readRows } from './source-files.js';
import type { BestOfNImporter } from './types.js';

const count = z.int().nonnegative();
const rowSchema = z.looseObject({
  id: z.union([z.string().min(1), z.number()]),
  prompt: z.string(),
  chosen: z.array(z.string()).min(1),
  rejected: z.array(z.string()).min(1),
  num_correct: count.optional(),
  num_rejected: count.optional(),
  total_completions: count.optional(),
  models: z.array(z.string()).optional(),
  subset: z.string().min(1),
});

function invalid(error: RubricateError, line: number, id?: string): BestOfNImportRecord {
  return { kind: 'invalid', error, line, ...(id !== undefined ? { id } : {}) };
}

export const rewardbench2Importer: BestOfNImporter = {
  name: 'rewardbench2',
  description: 'RewardBench 2 rows {id, prompt, chosen, rejected, num_correct, subset}: best-of-4 per subset, Ties with several correct answers',
  async *read(file) {
    for await (const entry of readRows(file)) {
      if ('error' in entry) {
        yield invalid(entry.error, entry.line);
        continue;
      }
      const parsed = rowSchema.safeParse(entry.value);
      if (!parsed.success) {
        yield invalid(zodErrorToInputError(parsed.error, { file, line: entry.line }), entry.line);
        continue;
      }
      const row = parsed.data;
      const id = String(row.id);
      const fail = (field: string, message: string) => invalid(new RubricateError('INPUT_INVALID', message, { file, line: entry.line, field }), entry.line, id);
      if (row.num_correct !== undefined && row.num_correct !== row.chosen.length) {
        yield fail('num_correct', `num_correct is ${row.num_correct} but chosen holds ${row.chosen.length} responses`);
        continue;
      }
      if (row.num_rejected !== undefined && row.num_rejected !== row.rejected.length) {
        yield fail('num_rejected', `num_rejected is ${row.num_rejected} but rejected holds ${row.rejected.length} responses`);
        continue;
      }
      if (row.total_completions !== undefined && row.total_completions !== row.chosen.length + row.rejected.length) {
        yield fail('total_completions', `total_completions is ${row.total_completions} but the row holds ${row.chosen.length + row.rejected.length} responses`);
        continue;
      }
      if (row.subset.toLowerCase() !== 'ties' && row.chosen.length !== 1) {
        yield fail('chosen', `a ${row.subset} row has one chosen response (best-of-4), this one has ${row.chosen.length}`);
        continue;
      }
      yield {
        kind: 'set',
        line: entry.line,
        set: { id, prompt: [{ role: 'user', content: row.prompt }], responses: [...row.chosen, ...row.rejected], correct: row.chosen.length, subset: row.subset, metadata: { dataset: 'rewardbench2', ...(row.models ? { models: row.models } : {}) } },
      };
    }
  },
};
