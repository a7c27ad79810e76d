/**
 * RubricHub (RuRL split): chat prompts with point-weighted criteria; a criterion whose
 * `tags.verifier` names a rule checker becomes a deterministic check when we have that
 * check, and otherwise falls back to the LLM judge (counted in a warning).
 */
import { z } from 'zod';
import { normalizeMessages } from '../rubric/normalize.js';
import { checkRegistry, validateCheck } from '../checks/registry.js';
import type { CheckSpec, CriterionInput } from '../rubric/schema.js';
import { buildItem, importExamples, parsedExamples } from './shared.js';
import type { Importer } from './types.js';

const rubricItemSchema = z.object({
  criterion: z.string().trim().min(1),
  points: z.number().refine(Number.isFinite, 'must be a finite number'),
  tags: z
    .looseObject({
      function: z.string().nullable().optional(),
      // The published files use "" as well as null for "no parameters".
      parameters: z.union([z.record(z.string(), z.unknown()), z.string()]).nullable().optional(),
      verifier: z.string().nullable().optional(),
    })
    .nullable()
    .optional(),
});

const exampleSchema = z.looseObject({
  id: z.union([z.string(), z.number()]).transform(String).optional(),
  prompt: z.union([z.string(), z.array(z.object({ role: z.string(), content: z.string() })).min(1)]),
  data_source: z.string().optional(),
  ability: z.string().optional(),
  response: z.string().optional(),
  reward_model: z.looseObject({ ground_truth: z.string().nullable().optional(), rubrics: z.array(rubricItemSchema).min(1) }),
});

/** A rule verifier becomes a check when its instruction id is a registered check and its parameters validate. */
function ruleCheck(instructionId: string, parameters: Record<string, unknown>): CheckSpec | undefined {
  if (!checkRegistry.has(instructionId)) return undefined;
  const spec: CheckSpec = { type: instructionId, ...parameters };
  return validateCheck(spec).ok ? spec : undefined;
}

export const rubrichubImporter: Importer = {
  name: 'rubrichub',
  accepts: ['responses'],
  defaultScoring: 'weighted_mean',
  description: 'RubricHub JSONL (prompt, reward_model.rubrics with tags.verifier); rule verifiers become checks where supported',
  async *read(file, options) {
    let fallbacks = 0;
    const unknownVerifiers = new Set<string>();
    yield* importExamples({
      examples: parsedExamples(file, exampleSchema, (example, line) => example.id ?? `${example.ability ?? 'rubrichub'}-${line}`),
      file,
      importOptions: options,
      responseKeyFields: ['id'],
      ownResponse: (example) => example.response,
      makeItem: (example, response, id, line) => {
        const criteria = example.reward_model.rubrics.map((rubricItem): CriterionInput => {
          const verifier = rubricItem.tags?.verifier ?? 'llm';
          const tags = [`verifier:${verifier}`];
          if (verifier !== 'llm') {
            const rawParameters = rubricItem.tags?.parameters;
            const parameters = Object.fromEntries(Object.entries(typeof rawParameters === 'object' && rawParameters !== null ? rawParameters : {}).filter(([, value]) => value !== null));
            const check = ruleCheck(rubricItem.criterion, parameters);
            if (check) return { text: rubricItem.criterion, points: rubricItem.points, tags, kind: 'hard_rule', check };
            fallbacks += 1;
            unknownVerifiers.add(rubricItem.tags?.function || rubricItem.criterion);
            return { text: rubricItem.criterion, points: rubricItem.points, tags, kind: 'hard_rule', metadata: { verifier, function: rubricItem.tags?.function, parameters } };
          }
          return { text: rubricItem.criterion, points: rubricItem.points, tags };
        });
        return buildItem({
          id,
          prompt: normalizeMessages(example.prompt),
          response,
          reference: example.reward_model.ground_truth || undefined,
          rubric: { criteria },
          tags: example.ability ? [`ability:${example.ability}`] : [],
          file,
          line,
        });
      },
    });
    if (fallbacks > 0) {
      options.onWarning?.(
        `${fallbacks} rule-verified criteria in ${file} have no matching deterministic check and go to the LLM judge (${[...unknownVerifiers].slice(0, 8).join(', ')}${unknownVerifiers.size > 8 ? ', …' : ''})`,
      );
    }
  },
};
