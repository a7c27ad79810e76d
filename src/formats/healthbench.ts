/**
 * HealthBench examples (simple-evals JSONL): prompt messages, rubric items with signed
 * points and tags, example tags. Responses come from `--responses` (JSONL with
 * `prompt_id` and `response`) or from the physicians' ideal completions.
 */
import { z } from 'zod';
import { RubricateError } from '../errors.js';
import { normalizeMessages, zodErrorToInputError } from '../rubric/normalize.js';
import { buildItem, joinResponses, readJsonObjects, type ExampleEntry } from './shared.js';
import type { Importer } from './types.js';
import type { ImportRecord } from '../rubric/records.js';

const exampleSchema = z.object({
  prompt_id: z.string().min(1),
  prompt: z.array(z.object({ role: z.string(), content: z.string() })).min(1),
  rubrics: z
    .array(
      z.object({
        criterion: z.string().min(1),
        points: z.number().refine(Number.isFinite, 'must be a finite number'),
        tags: z.array(z.string()).default([]),
      }),
    )
    .min(1, 'an example needs at least one rubric item'),
  example_tags: z.array(z.string()).default([]),
  ideal_completions_data: z.object({ ideal_completion: z.string() }).loose().nullable().optional(),
});

type Example = z.infer<typeof exampleSchema>;

function toItem(example: Example, response: string, id: string, file: string, line: number) {
  return buildItem({
    id,
    prompt: normalizeMessages(example.prompt),
    response,
    rubric: {
      id: example.prompt_id,
      criteria: example.rubrics.map((rubricItem) => ({ text: rubricItem.criterion, points: rubricItem.points, tags: rubricItem.tags })),
    },
    tags: example.example_tags,
    metadata: { prompt_id: example.prompt_id },
    file,
    line,
  });
}

export const healthbenchImporter: Importer = {
  name: 'healthbench',
  accepts: ['responses', 'responseFrom'],
  defaultScoring: 'healthbench',
  description: 'HealthBench examples JSONL; responses from --responses FILE ({prompt_id, response}) or --response-from ideal',
  async *read(file, options): AsyncGenerator<ImportRecord> {
    async function* examples(): AsyncGenerator<ExampleEntry<Example>> {
      for await (const entry of readJsonObjects(file)) {
        if ('error' in entry) {
          yield entry;
          continue;
        }
        const parsed = exampleSchema.safeParse(entry.value);
        const key = typeof entry.value.prompt_id === 'string' ? entry.value.prompt_id : undefined;
        if (!parsed.success) yield { line: entry.line, error: zodErrorToInputError(parsed.error, { file, line: entry.line }), key };
        else yield { line: entry.line, example: parsed.data, key: parsed.data.prompt_id };
      }
    }
    if (options.responses) {
      yield* joinResponses({
        examples: examples(),
        responsesFile: options.responses,
        keyFields: ['prompt_id'],
        makeItem: (example: Example, response, id, line) => toItem(example, response, id, file, line),
        sourceFile: file,
        onWarning: options.onWarning,
      });
      return;
    }
    if (options.responseFrom === undefined && options.withoutResponses) {
      // Rubric-only (convert): every example, each without a response.
      for await (const entry of examples()) {
        if ('error' in entry) {
          yield { kind: 'invalid', line: entry.line, error: entry.error, ...(entry.key ? { id: entry.key } : {}) };
          continue;
        }
        try {
          yield { kind: 'item', line: entry.line, item: toItem(entry.example, '', entry.key, file, entry.line), withoutResponse: true };
        } catch (error) {
          yield { kind: 'invalid', line: entry.line, id: entry.key, error: error as RubricateError };
        }
      }
      return;
    }
    if (options.responseFrom !== 'ideal') {
      throw new RubricateError('CONFIG_INVALID', 'healthbench needs responses: --responses FILE (JSONL {prompt_id, response}) or --response-from ideal', {
        field: 'responses',
      });
    }
    let withoutIdeal = 0;
    for await (const entry of examples()) {
      if ('error' in entry) {
        yield { kind: 'invalid', line: entry.line, error: entry.error, ...(entry.key ? { id: entry.key } : {}) };
        continue;
      }
      const ideal = entry.example.ideal_completions_data?.ideal_completion;
      if (ideal === undefined) {
        // Most examples have no physician completion; they are not errors, just not gradable this way.
        withoutIdeal += 1;
        continue;
      }
      try {
        yield { kind: 'item', line: entry.line, item: toItem(entry.example, ideal, entry.key, file, entry.line) };
      } catch (error) {
        yield { kind: 'invalid', line: entry.line, id: entry.key, error: error as RubricateError };
      }
    }
    if (withoutIdeal > 0) options.onWarning?.(`${withoutIdeal} example(s) in ${file} have no ideal completion and were skipped`);
  },
};
