/**
 * RM-Bench (THU-KEG/RM-Bench, `total_dataset.json` or a domain's file, also as JSONL): each row is
 * `{id, prompt, chosen: [concise, detailed, detailed with markdown], rejected: [the same three
 * styles], domain}` with `domain` one of chat, code, math, safety-refuse, safety-response. A row
 * becomes a best-of-N set of six responses, the three chosen first, its subset the domain.
 */
import { z } from 'zod';
import { zodErrorToInputError } from '../rubric/normalize.js';
import { readRows } from './source-files.js';
import type { BestOfNImporter } from './types.js';

const threeStyles = z.array(z.string()).length(3, 'RM-Bench has three styles: concise, detailed, detailed with markdown');
const rowSchema = z.looseObject({
  id: z.union([z.string().min(1), z.number()]),
  prompt: z.string(),
  chosen: threeStyles,
  rejected: threeStyles,
  domain: z.string().min(1),
});

export const rmBenchImporter: BestOfNImporter = {
  name: 'rm-bench',
  description: 'RM-Bench rows {id, prompt, chosen[3], rejected[3], domain}: 3 chosen × 3 rejected styles, easy/normal/hard accuracy per domain',
  async *read(file) {
    for await (const entry of readRows(file)) {
      if ('error' in entry) {
        yield { kind: 'invalid', error: entry.error, line: entry.line };
        continue;
      }
      const parsed = rowSchema.safeParse(entry.value);
      if (!parsed.success) {
        yield { kind: 'invalid', error: zodErrorToInputError(parsed.error, { file, line: entry.line }), line: entry.line };
        continue;
      }
      const row = parsed.data;
      yield { kind: 'set', line: entry.line, set: { id: String(row.id), prompt: [{ role: 'user', content: row.prompt }], responses: [...row.chosen, ...row.rejected], correct: 3, subset: row.domain, metadata: { dataset: 'rm-bench' } } };
    }
  },
};
