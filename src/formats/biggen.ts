/**
 * BiGGen-Bench (Prometheus): one 1–5 score rubric per instance with a description per
 * level, kept as a single ordinal criterion; the reference answer goes to the judge.
 */
import { z } from 'zod';
import { RubricateError } from '../errors.js';
import type { Message, Scale } from '../rubric/schema.js';
import { zodErrorToInputError } from '../rubric/normalize.js';
import { buildItem, importExamples, readJsonFile, type ExampleEntry } from './shared.js';
import type { Importer } from './types.js';
import type { ImportRecord } from '../rubric/records.js';

const instanceSchema = z.looseObject({
  id: z.union([z.string(), z.number()]).transform(String).optional(),
  capability: z.string().optional(),
  task: z.string().optional(),
  system_prompt: z.string().optional(),
  input: z.string().min(1),
  reference_answer: z.string().optional(),
  response: z.string().optional(),
  score_rubric: z.object({
    criteria: z.string().min(1),
    score1_description: z.string(),
    score2_description: z.string(),
    score3_description: z.string(),
    score4_description: z.string(),
    score5_description: z.string(),
  }),
});

type Instance = z.infer<typeof instanceSchema> & { id: string };

export function likertScale(descriptions: string[]): Scale {
  return { type: 'ordinal', choices: descriptions.map((description, index) => ({ label: String(index + 1), description })) };
}

async function* instances(file: string): AsyncGenerator<ExampleEntry<Instance>> {
  const document = await readJsonFile(file);
  const entries: Array<[string, unknown]> = Array.isArray(document)
    ? document.map((value, index) => [String(index), value])
    : typeof document === 'object' && document !== null
      ? Object.entries(document)
      : [];
  if (entries.length === 0) throw new RubricateError('INPUT_INVALID', 'expected an object of instances keyed by id, or a list', { file });
  for (let index = 0; index < entries.length; index += 1) {
    const [key, value] = entries[index];
    const line = index + 1;
    const parsed = instanceSchema.safeParse(value);
    if (!parsed.success) {
      yield { line, key, error: zodErrorToInputError(parsed.error, { file, line, fieldPrefix: key }) };
      continue;
    }
    const id = parsed.data.id ?? key;
    yield { line, key: id, example: { ...parsed.data, id } };
  }
}

export const biggenImporter: Importer = {
  name: 'biggen',
  accepts: ['responses'],
  defaultScoring: 'biggen',
  description: 'BiGGen-Bench JSON (id → {system_prompt, input, reference_answer, score_rubric}); one 1–5 ordinal criterion; --responses keyed by id',
  read(file, options) {
    const records = importExamples({
      examples: instances(file),
      file,
      importOptions: options,
      responseKeyFields: ['id'],
      ownResponse: (instance) => instance.response,
      makeItem: (instance, response, id, line) => {
        const rubric = instance.score_rubric;
        const prompt: Message[] = [];
        if (instance.system_prompt) prompt.push({ role: 'system', content: instance.system_prompt });
        prompt.push({ role: 'user', content: instance.input });
        return buildItem({
          id,
          prompt,
          response,
          reference: instance.reference_answer,
          rubric: {
            criteria: [
              {
                id: 'score_rubric',
                text: rubric.criteria,
                points: 1,
                scale: likertScale([rubric.score1_description, rubric.score2_description, rubric.score3_description, rubric.score4_description, rubric.score5_description]),
                // Criterion text is trimmed; the Prometheus layout shows the rubric exactly as written.
                ...(rubric.criteria !== rubric.criteria.trim() ? { metadata: { criteria_verbatim: rubric.criteria } } : {}),
              },
            ],
          },
          tags: [...(instance.capability ? [`capability:${instance.capability}`] : []), ...(instance.task ? [`task:${instance.task}`] : [])],
          file,
          line,
        });
      },
    });
    return options.judgeProtocol === 'prometheus' ? withoutPrometheusSkips(records, options.onSkipped) : records;
  },
};

/**
 * BiGGen-Bench's own evaluation (`run_response_eval.py`) does not grade the `llm_judge`
 * instances (those whose id contains "llm_judge") when the judge is a Prometheus model: they
 * ask the response model to grade, which needs a different prompt. The importer leaves them
 * out the same way when told the protocol (`grade --format biggen --judge-protocol prometheus`
 * says how many).
 */
export function biggenSkipsWithPrometheus(id: string): boolean {
  return id.includes('llm_judge');
}

const prometheusSkipReason = 'BiGGen-Bench does not grade llm_judge instances with a Prometheus judge';

/** The records minus the instances BiGGen skips with a Prometheus judge, each reported to `onSkipped`. */
async function* withoutPrometheusSkips(records: AsyncIterable<ImportRecord>, onSkipped: ((reason: string) => void) | undefined): AsyncGenerator<ImportRecord> {
  for await (const record of records) {
    if (record.kind === 'item' && biggenSkipsWithPrometheus(record.item.id)) {
      onSkipped?.(prometheusSkipReason);
      continue;
    }
    yield record;
  }
}
