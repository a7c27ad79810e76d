/**
 * DeepResearch Bench II: per task, criteria in three dimensions (information recall,
 * analysis, presentation), each judged three ways as the reference judge is asked: satisfied
 * (1), not mentioned (0), or mentioned but supported only by a blocked source (−1, the
 * `blocked_rate`). The task's blocked source goes into the "blocked" choice's description.
 */
import { z } from 'zod';
import { normalizeMessages } from '../rubric/normalize.js';
import type { Scale } from '../rubric/schema.js';
import { buildItem, importExamples, parsedExamples } from './shared.js';
import type { Importer } from './types.js';

export const drb2Dimensions = ['info_recall', 'analysis', 'presentation'] as const;

const exampleSchema = z.looseObject({
  id: z.union([z.string(), z.number()]).transform(String),
  idx: z.number().optional(),
  language: z.string().optional(),
  theme: z.string().optional(),
  prompt: z.string().min(1),
  response: z.string().optional(),
  content: z.looseObject({
    rubric: z.object({
      info_recall: z.array(z.string()).default([]),
      analysis: z.array(z.string()).default([]),
      presentation: z.array(z.string()).default([]),
    }),
    blocked: z.unknown().optional(),
  }),
});

const blockedSchema = z.looseObject({ title: z.string().optional(), urls: z.array(z.string()).optional() });

/** The three-way scale of the reference's judge; "blocked" and "not satisfied" are both worth 0. */
export function drb2Scale(blocked: unknown): Scale {
  const source = blockedSchema.safeParse(blocked);
  const named = source.success ? [source.data.title, ...(source.data.urls ?? [])].filter((part): part is string => typeof part === 'string' && part.trim() !== '') : [];
  const blockedText = named.length > 0 ? ` (the blocked source: ${named.join('; ')})` : '';
  return {
    type: 'ordinal',
    choices: [
      { label: 'blocked', value: 0, description: `The response covers this item, but the sentences supporting it cite the blocked source${blockedText}.` },
      { label: 'not satisfied', value: 0, description: 'The response does not cover this item.' },
      { label: 'satisfied', value: 1, description: 'The response clearly covers this item (exact values where the item gives numbers), without relying on the blocked source.' },
    ],
    metThreshold: 1,
  };
}

export const drb2Importer: Importer = {
  name: 'drb2',
  accepts: ['responses'],
  defaultScoring: 'drb2',
  description: 'DeepResearch Bench II tasks_and_rubrics.jsonl (content.rubric lists); --responses keyed by id',
  read(file, options) {
    return importExamples({
      examples: parsedExamples(file, exampleSchema, (example) => example.id),
      file,
      importOptions: options,
      responseKeyFields: ['id', 'task_id'],
      ownResponse: (example) => example.response,
      makeItem: (example, response, id, line) => {
        const scale = drb2Scale(example.content.blocked);
        return buildItem({
          id,
          prompt: normalizeMessages(example.prompt),
          response,
          rubric: {
            id: example.id,
            criteria: drb2Dimensions.flatMap((dimension) =>
              example.content.rubric[dimension]
                .filter((text) => text.trim() !== '')
                .map((text) => ({ text: text.trim(), points: 1, tags: [`dimension:${dimension}`], scale })),
            ),
          },
          tags: [...(example.theme ? [`theme:${example.theme}`] : []), ...(example.language ? [`language:${example.language}`] : [])],
          metadata: { task_id: example.id, ...(example.idx !== undefined ? { idx: example.idx } : {}), ...(example.content.blocked ? { blocked: example.content.blocked } : {}) },
          file,
          line,
        });
      },
    });
  },
};
