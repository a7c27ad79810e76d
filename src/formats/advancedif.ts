/**
 * AdvancedIF (Meta): the conversation, the response and the rubric all arrive as JSON
 * encoded inside JSON strings (rubrics even twice). Each rubric question is a binary
 * criterion where "yes" is good.
 */
import { z } from 'zod';
import { RubricateError } from '../errors.js';
import { safeParseJson } from '../util/json.js';
import { normalizeMessages } from '../rubric/normalize.js';
import { buildItem, importExamples, readJsonObjects, responseText, type ExampleEntry } from './shared.js';
import type { Importer } from './types.js';

const messagesSchema = z.array(z.object({ role: z.string(), content: z.string() })).min(1);

interface AdvancedIfExample {
  id: string;
  benchmark?: string;
  conversation: Array<{ role: string; content: string }>;
  response?: string;
  rubrics: string[];
}

/** Decodes a field that may be a JSON string (possibly of another JSON string) or the value itself. */
function decodeNested(value: unknown, depth = 3): unknown {
  let current = value;
  for (let level = 0; level < depth && typeof current === 'string'; level += 1) {
    const parsed = safeParseJson(current);
    if (!parsed.ok) return current;
    current = parsed.value;
  }
  return current;
}

function parseExample(record: Record<string, unknown>, file: string, line: number): AdvancedIfExample | RubricateError {
  const location = (field: string, message: string) => new RubricateError('INPUT_INVALID', message, { file, line, field });
  const conversation = messagesSchema.safeParse(decodeNested(record.conversation_history));
  if (!conversation.success) return location('conversation_history', 'must be a JSON-encoded list of {role, content} messages');
  const metadata = decodeNested(record.prompt_metadata);
  if (typeof metadata !== 'object' || metadata === null) return location('prompt_metadata', 'must be a JSON-encoded object');
  const rubrics = decodeNested((metadata as { rubrics?: unknown }).rubrics);
  if (!Array.isArray(rubrics) || rubrics.length === 0 || !rubrics.every((entry) => typeof entry === 'string' && entry.trim() !== '')) {
    return location('prompt_metadata.rubrics', 'must be a JSON-encoded non-empty list of criterion strings');
  }
  const example: AdvancedIfExample = {
    id: record.id !== undefined ? String(record.id) : `advancedif-${line}`,
    conversation: conversation.data,
    rubrics: (rubrics as string[]).map((text) => text.trim()),
  };
  if (typeof record.benchmark_name === 'string') example.benchmark = record.benchmark_name;
  const response = responseText(decodeNested(record.response));
  if (response !== undefined) example.response = response;
  return example;
}

async function* examples(file: string): AsyncGenerator<ExampleEntry<AdvancedIfExample>> {
  for await (const entry of readJsonObjects(file)) {
    if ('error' in entry) {
      yield entry;
      continue;
    }
    const parsed = parseExample(entry.value, file, entry.line);
    if (RubricateError.isInstance(parsed)) yield { line: entry.line, error: parsed };
    else yield { line: entry.line, example: parsed, key: parsed.id };
  }
}

export const advancedifImporter: Importer = {
  name: 'advancedif',
  accepts: ['responses'],
  defaultScoring: 'weighted_mean',
  description: 'AdvancedIF JSONL (conversation_history, response and prompt_metadata.rubrics as JSON strings)',
  read(file, options) {
    return importExamples({
      examples: examples(file),
      file,
      importOptions: options,
      responseKeyFields: ['id'],
      ownResponse: (example) => example.response,
      makeItem: (example, response, id, line) =>
        buildItem({
          id,
          prompt: normalizeMessages(example.conversation),
          response,
          rubric: { criteria: example.rubrics.map((text) => ({ text, points: 1 })) },
          tags: example.benchmark ? [`benchmark:${example.benchmark}`] : [],
          file,
          line,
        }),
    });
  },
};
