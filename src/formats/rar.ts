/**
 * Rubrics as Rewards (RaR-Medicine / RaR-Science): a question, a reference answer and
 * 7–20 criteria {title, description, weight}; weights 5 Essential … negative Pitfall.
 */
import { z } from 'zod';
import { normalizeMessages } from '../rubric/normalize.js';
import { buildItem, importExamples, parsedExamples } from './shared.js';
import type { Importer } from './types.js';

const rubricItemSchema = z.object({
  title: z.string().optional(),
  description: z.string().trim().min(1),
  weight: z.number().refine(Number.isFinite, 'must be a finite number'),
});

const exampleSchema = z
  .looseObject({
    id: z.union([z.string(), z.number()]).transform(String).optional(),
    question: z.string().optional(),
    prompt: z.string().optional(),
    reference_answer: z.string().optional(),
    response: z.string().optional(),
    rubric: z.array(rubricItemSchema).min(1).optional(),
    rubrics: z.array(rubricItemSchema).min(1).optional(),
  })
  .refine((example) => (example.question ?? example.prompt) !== undefined, { message: 'needs `question` (or `prompt`)', path: ['question'] })
  .refine((example) => (example.rubric ?? example.rubrics) !== undefined, { message: 'needs a `rubric` list', path: ['rubric'] });

const importancePattern = /^\s*(essential|important|optional|pitfall)\s+criteria\s*:/i;

export const rarImporter: Importer = {
  name: 'rar',
  accepts: ['responses'],
  defaultScoring: 'rar_explicit',
  description: 'RaR JSONL {question, reference_answer, rubric[{title, description, weight}]}; --responses keyed by id',
  read(file, options) {
    return importExamples({
      examples: parsedExamples(file, exampleSchema, (example, line) => example.id ?? `rar-${line}`),
      file,
      importOptions: options,
      responseKeyFields: ['id'],
      ownResponse: (example) => example.response,
      makeItem: (example, response, id, line) =>
        buildItem({
          id,
          prompt: normalizeMessages((example.question ?? example.prompt)!),
          response,
          reference: example.reference_answer,
          rubric: {
            criteria: (example.rubric ?? example.rubrics)!.map((rubricItem) => {
              const importance = importancePattern.exec(rubricItem.description)?.[1]?.toLowerCase();
              return {
                text: rubricItem.description,
                points: rubricItem.weight,
                tags: importance ? [`importance:${importance}`] : [],
                ...(rubricItem.title ? { metadata: { title: rubricItem.title } } : {}),
              };
            }),
          },
          file,
          line,
        }),
    });
  },
};
