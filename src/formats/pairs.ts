/**
 * rubricate's own pairwise JSONL: {id?, prompt, response_a, response_b, rubric?, label?, source?,
 * reference?}, what `compare`, `meta` and `generate --format pairs` read. The older preference
 * spelling {prompt, chosen, rejected} is the same pair (chosen is A and the gold winner), read
 * with one notice per file.
 */
import { z } from 'zod';
import { RubricateError } from '../errors.js';
import { normalizeMessages, normalizeRubric, zodErrorToInputError } from '../rubric/normalize.js';
import { freeObjectSchema, messageInputSchema, type PairwiseItem } from '../rubric/schema.js';
import { readJsonObjects } from './shared.js';
import type { PairwiseImporter } from './types.js';

const pairSchema = z.object({
  id: z.union([z.string().min(1), z.number()]).transform(String).optional(),
  prompt: z.union([z.string(), z.array(messageInputSchema).min(1)]),
  response_a: z.string(),
  response_b: z.string(),
  rubric: z.unknown().optional(),
  label: z.enum(['A', 'B', 'tie']).optional(),
  source: z.string().optional(),
  reference: z.string().optional(),
  metadata: freeObjectSchema.optional(),
});

/** {chosen, rejected} as the pair it means; the other fields as they are. */
function fromOldSpelling({ chosen, rejected, ...rest }: Record<string, unknown>): Record<string, unknown> {
  return { ...rest, response_a: chosen, response_b: rejected, label: rest.label ?? 'A' };
}

export const pairsImporter: PairwiseImporter = {
  name: 'pairs',
  description: 'pairwise JSONL: {id?, prompt, response_a, response_b, rubric?, label? (A|B|tie), source?, reference?} (the older {prompt, chosen, rejected} is read as A = chosen, label A)',
  async *read(file, options) {
    let notedOldSpelling = false;
    for await (const entry of readJsonObjects(file)) {
      if ('error' in entry) {
        yield { kind: 'invalid', line: entry.line, error: entry.error };
        continue;
      }
      const oldSpelling = entry.value.response_a === undefined && entry.value.response_b === undefined && (entry.value.chosen !== undefined || entry.value.rejected !== undefined);
      if (oldSpelling && !notedOldSpelling) {
        notedOldSpelling = true;
        options.onWarning?.(`${file}: {chosen, rejected} is the older spelling of --format pairs, read as {response_a: chosen, response_b: rejected, label: "A"}; write response_a, response_b and label instead`);
      }
      const parsed = pairSchema.safeParse(oldSpelling ? fromOldSpelling(entry.value) : entry.value);
      if (!parsed.success) {
        const error = zodErrorToInputError(parsed.error, { file, line: entry.line });
        // The field as the line spells it.
        if (oldSpelling && error.details.field) error.details.field = error.details.field.replace(/^response_a\b/, 'chosen').replace(/^response_b\b/, 'rejected');
        yield { kind: 'invalid', line: entry.line, error };
        continue;
      }
      const value = parsed.data;
      const id = value.id ?? `pair-${entry.line}`;
      try {
        const pair: PairwiseItem = { id, prompt: normalizeMessages(value.prompt), responseA: value.response_a, responseB: value.response_b };
        if (value.rubric !== undefined) pair.rubric = normalizeRubric(value.rubric, { file, line: entry.line, fieldPrefix: 'rubric' });
        if (value.label) pair.label = value.label;
        if (value.source) pair.source = value.source;
        const metadata = { ...value.metadata, ...(value.reference !== undefined ? { reference: value.reference } : {}) };
        if (Object.keys(metadata).length > 0) pair.metadata = metadata;
        yield { kind: 'pair', line: entry.line, pair };
      } catch (error) {
        yield { kind: 'invalid', line: entry.line, id, error: error as RubricateError };
      }
    }
  },
};
