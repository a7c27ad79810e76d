/**
 * A simple-evals HealthBench `*_allresults.json`: per example, the rubric items with the
 * grader's `criteria_met` and explanation. Imported as graded results, so `rubricate score`
 * reproduces simple-evals' metrics without calling a judge.
 */
import { z } from 'zod';
import { RubricateError } from '../errors.js';
import type { ResultReadRecord, ResultRecord } from '../results/results.js';
import { healthbenchScoring } from '../scoring/registry.js';
import { rubricateVersion } from '../version.js';
import { deriveCriterionId, zodErrorToInputError } from '../rubric/normalize.js';
import { readJsonFile, readJsonObjects } from './shared.js';
import type { ResultsImporter } from './types.js';

const exampleSchema = z.object({
  prompt_id: z.string(),
  completion_id: z.string().optional(),
  prompt: z.array(z.object({ role: z.string(), content: z.string() })).optional(),
  completion: z.array(z.object({ role: z.string(), content: z.string() })).optional(),
  score: z.number().nullable().optional(),
  rubric_items: z.array(
    z.object({
      criterion: z.string(),
      points: z.number(),
      tags: z.array(z.string()).default([]),
      criteria_met: z.boolean(),
      explanation: z.string().optional(),
    }),
  ),
});

const fileSchema = z.object({
  metadata: z.object({ example_level_metadata: z.array(z.unknown()) }),
});

async function exampleTagsById(file: string): Promise<Map<string, string[]>> {
  const tags = new Map<string, string[]>();
  for await (const entry of readJsonObjects(file)) {
    if ('error' in entry) continue;
    const { prompt_id: promptId, example_tags: exampleTags } = entry.value as { prompt_id?: unknown; example_tags?: unknown };
    if (typeof promptId === 'string' && Array.isArray(exampleTags)) tags.set(promptId, exampleTags.map(String));
  }
  return tags;
}

export const simpleEvalsImporter: ResultsImporter = {
  name: 'simple-evals',
  accepts: ['examples'],
  description: 'simple-evals HealthBench *_allresults.json (graded results; --examples FILE adds example tags)',
  async *read(file, options): AsyncGenerator<ResultReadRecord> {
    const document = await readJsonFile(file);
    const checked = fileSchema.safeParse(document);
    if (!checked.success) throw zodErrorToInputError(checked.error, { file });
    const tags = options.examples ? await exampleTagsById(options.examples) : undefined;
    const seen = new Map<string, number>();
    const examples = checked.data.metadata.example_level_metadata;
    for (let index = 0; index < examples.length; index += 1) {
      const line = index + 1;
      const parsed = exampleSchema.safeParse(examples[index]);
      if (!parsed.success) {
        const error = zodErrorToInputError(parsed.error, { file, line, fieldPrefix: `metadata.example_level_metadata[${index}]` });
        yield { kind: 'invalid', line, error };
        continue;
      }
      const example = parsed.data;
      const repeat = (seen.get(example.prompt_id) ?? 0) + 1;
      seen.set(example.prompt_id, repeat);
      const idCounts = new Map<string, number>();
      const record: ResultRecord = {
        id: repeat > 1 ? `${example.prompt_id}#${repeat}` : example.prompt_id,
        status: 'ok',
        score: null,
        criteria: example.rubric_items.map((rubricItem) => {
          const base = deriveCriterionId(rubricItem.criterion);
          const count = (idCounts.get(base) ?? 0) + 1;
          idCounts.set(base, count);
          return {
            id: count > 1 ? `${base}_${count}` : base,
            text: rubricItem.criterion,
            points: rubricItem.points,
            tags: rubricItem.tags,
            kind: 'principle',
            source: 'judge',
            status: 'ok',
            met: rubricItem.criteria_met,
            ...(rubricItem.explanation !== undefined ? { explanation: rubricItem.explanation } : {}),
          };
        }),
        rubricate_version: rubricateVersion,
      };
      const exampleTags = tags?.get(example.prompt_id);
      if (exampleTags) record.tags = exampleTags;
      if (example.prompt) record.prompt = example.prompt;
      const completion = example.completion?.at(-1)?.content;
      if (completion !== undefined) record.response = completion;
      record.metadata = { prompt_id: example.prompt_id, ...(example.completion_id ? { completion_id: example.completion_id } : {}) };
      record.scoring = healthbenchScoring.name;
      record.score = healthbenchScoring.itemScore({ id: record.id, status: 'ok', criteria: record.criteria.map((criterion) => ({ ...criterion })) });
      if (typeof example.score === 'number' && record.score !== null && Math.abs(example.score - record.score) > 1e-9) {
        options.onWarning?.(`${file}: example ${index + 1} (${example.prompt_id}) recorded score ${example.score} but its verdicts give ${record.score}`);
      }
      yield { kind: 'result', record, line };
    }
    if (examples.length === 0) throw new RubricateError('INPUT_INVALID', 'no examples in metadata.example_level_metadata', { file });
  },
};
