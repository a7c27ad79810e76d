/**
 * DeepResearch Bench II: per task, binary criteria in three dimensions (information
 * recall, analysis, presentation); each is scored separately and together (by_tag).
 */
import { z } from 'zod';
import { normalizeMessages } from '../normalize.js';
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

export const drb2Importer: Importer = {
  name: 'drb2',
  accepts: ['responses'],
  defaultScoring: 'weighted_mean',
  description: 'DeepResearch Bench II tasks_and_rubrics.jsonl (content.rubric lists); --responses keyed by id',
  read(file, options) {
    return importExamples({
      examples: parsedExamples(file, exampleSchema, (example) => example.id),
      file,
      importOptions: options,
      responseKeyFields: ['id', 'task_id'],
      ownResponse: (example) => example.response,
      makeItem: (example, response, id, line) =>
        buildItem({
          id,
          prompt: normalizeMessages(example.prompt),
          response,
          rubric: {
            id: example.id,
            criteria: drb2Dimensions.flatMap((dimension) =>
              example.content.rubric[dimension]
                .filter((text) => text.trim() !== '')
                .map((text) => ({ text: text.trim(), points: 1, tags: [`dimension:${dimension}`] })),
            ),
          },
          tags: [...(example.theme ? [`theme:${example.theme}`] : []), ...(example.language ? [`language:${example.language}`] : [])],
          metadata: { task_id: example.id, ...(example.idx !== undefined ? { idx: example.idx } : {}), ...(example.content.blocked ? { blocked: example.content.blocked } : {}) },
          file,
          line,
        }),
    });
  },
};
