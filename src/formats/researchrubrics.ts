/**
 * ResearchRubrics (Scale AI): a research prompt with weighted criteria (negative weights
 * are penalties) on seven axes, graded Satisfied / Partially / Not Satisfied (1 / 0.5 / 0).
 */
import { z } from 'zod';
import { normalizeMessages } from '../rubric/normalize.js';
import type { Scale } from '../rubric/schema.js';
import { buildItem, importExamples, parsedExamples } from './shared.js';
import type { Importer } from './types.js';

/** ResearchRubrics' ternary scale; the binary view counts only Satisfied as met. */
export const ternaryScale: Scale = {
  type: 'ordinal',
  choices: [
    { label: 'Not Satisfied', value: 0 },
    { label: 'Partially Satisfied', value: 0.5 },
    { label: 'Satisfied', value: 1 },
  ],
  metThreshold: 1,
};

const exampleSchema = z.looseObject({
  sample_id: z.union([z.string(), z.number()]).transform(String),
  prompt: z.string().min(1),
  domain: z.string().optional(),
  response: z.string().optional(),
  rubrics: z
    .array(
      z.object({
        criterion: z.string().trim().min(1),
        weight: z.number().refine(Number.isFinite, 'must be a finite number'),
        axis: z.string().optional(),
      }),
    )
    .min(1),
});

export const researchrubricsImporter: Importer = {
  name: 'researchrubrics',
  accepts: ['responses'],
  defaultScoring: 'compliance',
  description: 'ResearchRubrics JSONL {sample_id, prompt, rubrics[{criterion, weight, axis}]}; ternary scale; --responses keyed by sample_id',
  read(file, options) {
    return importExamples({
      examples: parsedExamples(file, exampleSchema, (example) => example.sample_id),
      file,
      importOptions: options,
      responseKeyFields: ['sample_id', 'id'],
      ownResponse: (example) => example.response,
      makeItem: (example, response, id, line) =>
        buildItem({
          id,
          prompt: normalizeMessages(example.prompt),
          response,
          rubric: {
            id: example.sample_id,
            criteria: example.rubrics.map((rubricItem) => ({
              text: rubricItem.criterion,
              points: rubricItem.weight,
              tags: rubricItem.axis ? [`axis:${rubricItem.axis}`] : [],
              scale: ternaryScale,
            })),
          },
          tags: example.domain ? [`domain:${example.domain}`] : [],
          metadata: { sample_id: example.sample_id },
          file,
          line,
        }),
    });
  },
};
