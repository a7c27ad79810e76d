/**
 * PRBench (Scale AI; the Hugging Face rows, one task per JSONL line): a conversation of up to
 * ten turns (`prompt_i`, `response_i`, `reference_texts_i`) and a rubric of criteria
 * {id, title, annotations{weight_class, <class>_weight, criteria_category}}. The weight is
 * the criterion's own integer `annotations[<weight_class>_weight]`, as PRBench's
 * `Criterion.find_weight` reads it; the class midpoint is only a fallback when that is absent.
 */
import { z } from 'zod';
import { RubricateError } from '../errors.js';
import { importanceSchemes } from '../rubric/importance.js';
import type { Message } from '../rubric/schema.js';
import { buildItem, importExamples, parsedExamples } from './shared.js';
import type { Importer } from './types.js';

const criterionSchema = z.looseObject({
  id: z.union([z.string(), z.number()]).transform(String),
  title: z.string().trim().min(1),
  annotations: z.looseObject({
    weight_class: z.string().min(1),
    criteria_category: z.string().nullish(),
  }),
});

const exampleSchema = z.looseObject({
  task: z.union([z.string(), z.number()]).transform(String),
  field: z.string().nullish(),
  topic: z.string().nullish(),
  response: z.string().optional(),
  rubric: z.array(criterionSchema).min(1),
});

type Example = z.infer<typeof exampleSchema>;

/** PRBench's weight for a criterion: its own annotated weight, else its class midpoint. */
export function prbenchCriterionWeight(annotations: Record<string, unknown>): { weight: number; source: 'annotation' | 'class' } {
  const weightClass = String(annotations.weight_class).trim().toLowerCase();
  const own = annotations[`${weightClass.replace(/ /g, '_')}_weight`];
  if (typeof own === 'number' && Number.isFinite(own)) return { weight: own, source: 'annotation' };
  const table = importanceSchemes.prbench as Record<string, number>;
  if (weightClass in table) return { weight: table[weightClass], source: 'class' };
  throw new RubricateError('INPUT_INVALID', `unknown PRBench weight_class "${annotations.weight_class}" and no weight for it (known: ${Object.keys(table).join(', ')})`, {
    field: 'rubric.annotations.weight_class',
  });
}

/** The conversation as PRBench builds it: reference texts prepended to their turn's prompt. */
function conversation(example: Example): Message[] {
  const row = example as Record<string, unknown>;
  const messages: Message[] = [];
  for (let turn = 0; turn < 10; turn += 1) {
    let prompt = row[`prompt_${turn}`];
    const references = row[`reference_texts_${turn}`];
    if (typeof prompt === 'string' && Array.isArray(references)) {
      prompt = references.map((text, index) => `Reference Text ${index}:\n${String(text)}\n\n`).join('') + prompt;
    }
    if (typeof prompt === 'string' && prompt.trim() !== '') messages.push({ role: 'user', content: prompt });
    const response = row[`response_${turn}`];
    if (typeof response === 'string' && response.trim() !== '') messages.push({ role: 'assistant', content: response });
  }
  return messages;
}

export const prbenchImporter: Importer = {
  name: 'prbench',
  accepts: ['responses'],
  defaultScoring: 'prbench_clipped',
  description: 'PRBench JSONL (task, prompt_i/response_i, rubric[{id, title, annotations}]); per-criterion annotated weights; --responses keyed by task',
  read(file, options) {
    return importExamples({
      examples: parsedExamples(file, exampleSchema, (example) => example.task),
      file,
      importOptions: options,
      responseKeyFields: ['task', 'id'],
      ownResponse: (example) => example.response,
      makeItem: (example, response, id, line) => {
        const criteria = example.rubric.map((criterion, index) => {
          let weighted: ReturnType<typeof prbenchCriterionWeight>;
          try {
            weighted = prbenchCriterionWeight(criterion.annotations);
          } catch (error) {
            throw new RubricateError('INPUT_INVALID', (error as Error).message, { file, line, field: `rubric.${index}.annotations.weight_class` });
          }
          const category = criterion.annotations.criteria_category;
          return {
            id: criterion.id,
            text: criterion.title,
            points: weighted.weight,
            tags: [`importance:${String(criterion.annotations.weight_class).trim().toLowerCase()}`, ...(category ? [`category:${category}`] : [])],
            ...(weighted.source === 'class' ? { metadata: { weight_from: 'class midpoint' } } : {}),
          };
        });
        return buildItem({
          id,
          prompt: conversation(example),
          response,
          rubric: { id: example.task, criteria },
          tags: [...(example.field ? [`field:${example.field}`] : []), ...(example.topic ? [`topic:${example.topic}`] : [])],
          metadata: { task: example.task },
          file,
          line,
        });
      },
    });
  },
};
