/**
 * ProfBench report generation (NVIDIA; the rows `run_best_llm_judge_on_generated_reports.py`
 * reads): one generated report per line {task_id, domain, response, rubrics[{
 * criterion_description, criterion_weight (Critical | Major | Minor | Additional),
 * criterion_type[]}]}. Several lines may share a task (several reports per task).
 */
import { z } from 'zod';
import { normalizeMessages } from '../rubric/normalize.js';
import { buildItem, importExamples, parsedExamples } from './shared.js';
import type { Importer } from './types.js';

/** The criterion-type tag the `profbench` scoring reads (its `criterionTypeTagPrefix`). */
const criterionTypeTagPrefix = 'criterion_type:';

const weightClasses = { Critical: 4, Major: 3, Minor: 2, Additional: 1 } as const;

const exampleSchema = z.looseObject({
  task_id: z.union([z.string(), z.number()]).transform(String),
  domain: z.string().min(1),
  prompt: z.string().optional(),
  response: z.string().optional(),
  rubrics: z
    .array(
      z.looseObject({
        criterion_description: z.string().trim().min(1),
        criterion_weight: z.enum(['Critical', 'Major', 'Minor', 'Additional']),
        criterion_type: z.union([z.array(z.string()), z.string()]).optional(),
      }),
    )
    .min(1),
});

export const profbenchImporter: Importer = {
  name: 'profbench',
  accepts: ['responses'],
  defaultScoring: 'profbench',
  description: 'ProfBench report JSONL {task_id, domain, prompt, response, rubrics[{criterion_description, criterion_weight, criterion_type}]}',
  read(file, options) {
    return importExamples({
      examples: parsedExamples(file, exampleSchema, (example, line) => `${example.task_id}#${line}`),
      file,
      importOptions: options,
      responseKeyFields: ['task_id'],
      ownResponse: (example) => example.response,
      makeItem: (example, response, id, line) =>
        buildItem({
          id,
          prompt: normalizeMessages(example.prompt ?? ''),
          response,
          rubric: {
            criteria: example.rubrics.map((criterion) => {
              // A bare string is one type (the reference iterates a list of types).
              const types = criterion.criterion_type === undefined ? [] : Array.isArray(criterion.criterion_type) ? criterion.criterion_type : [criterion.criterion_type];
              return {
                text: criterion.criterion_description,
                points: weightClasses[criterion.criterion_weight],
                importance: criterion.criterion_weight,
                tags: types.map((type) => `${criterionTypeTagPrefix}${type}`),
              };
            }),
            importance_scheme: 'profbench',
          },
          tags: [`domain:${example.domain}`],
          metadata: { task_id: example.task_id, domain: example.domain },
          file,
          line,
        }),
    });
  },
};
