/** rubricate's own pairwise JSONL: {id, prompt, response_a, response_b, rubric?, label?, source?, reference?}. */
import { z } from 'zod';
import { RubricateError } from '../../errors.js';
import { normalizeMessages, normalizeRubric, zodErrorToInputError } from '../normalize.js';
import { freeObjectSchema, messageInputSchema, type PairwiseItem } from '../schema.js';
import { readJsonObjects } from './shared.js';
import type { PairwiseImporter } from './types.js';

const pairSchema = z.object({
  id: z.union([z.string().min(1), z.number()]).transform(String),
  prompt: z.union([z.string(), z.array(messageInputSchema).min(1)]),
  response_a: z.string(),
  response_b: z.string(),
  rubric: z.unknown().optional(),
  label: z.enum(['A', 'B', 'tie']).optional(),
  source: z.string().optional(),
  reference: z.string().optional(),
  metadata: freeObjectSchema.optional(),
});

export const pairsImporter: PairwiseImporter = {
  name: 'pairs',
  description: 'pairwise JSONL: {id, prompt, response_a, response_b, rubric?, label? (A|B|tie), source?, reference?}',
  async *read(file) {
    for await (const entry of readJsonObjects(file)) {
      if ('error' in entry) {
        yield { kind: 'invalid', line: entry.line, error: entry.error };
        continue;
      }
      const parsed = pairSchema.safeParse(entry.value);
      if (!parsed.success) {
        yield { kind: 'invalid', line: entry.line, error: zodErrorToInputError(parsed.error, { file, line: entry.line }) };
        continue;
      }
      const value = parsed.data;
      try {
        const pair: PairwiseItem = { id: value.id, prompt: normalizeMessages(value.prompt), responseA: value.response_a, responseB: value.response_b };
        if (value.rubric !== undefined) pair.rubric = normalizeRubric(value.rubric, { file, line: entry.line, fieldPrefix: 'rubric' });
        if (value.label) pair.label = value.label;
        if (value.source) pair.source = value.source;
        const metadata = { ...value.metadata, ...(value.reference !== undefined ? { reference: value.reference } : {}) };
        if (Object.keys(metadata).length > 0) pair.metadata = metadata;
        yield { kind: 'pair', line: entry.line, pair };
      } catch (error) {
        yield { kind: 'invalid', line: entry.line, id: value.id, error: error as RubricateError };
      }
    }
  },
};
