/**
 * Input files of `generate` and `refine`: prompt records (`{id, prompt, reference?, rubric?,
 * ...}`), validated line by line with errors that name the file, line and field; and
 * responses files (`{id, response}` lines, or `{id, responses: [...]}`).
 */
import { z } from 'zod';
import { RubricateError } from '../errors.js';
import { normalizeMessages, normalizeRubric, zodErrorToInputError } from '../rubric/normalize.js';
import { messageInputSchema, type Message, type Rubric } from '../rubric/schema.js';
import { parseLineJson, readLines } from '../util/jsonl.js';
import type { InvalidRecord } from '../rubric/records.js';

export interface PromptRecord {
  id: string;
  /** The prompt as written in the input (string or messages), echoed in the output. */
  promptInput: string | unknown[];
  prompt: Message[];
  reference?: string;
  rubric?: Rubric;
  metadata?: Record<string, unknown>;
  /** Preference pairs for the same prompt (`chosen`/`rejected`, or `pairs: [...]`). */
  pairs?: Array<{ chosen: string; rejected: string }>;
  line: number;
}

export type PromptReadRecord = { kind: 'prompt'; record: PromptRecord; line: number } | InvalidRecord;

const promptLineSchema = z.looseObject({
  id: z.union([z.string().min(1), z.number()]),
  prompt: z.union([z.string().min(1, 'prompt must not be empty'), z.array(messageInputSchema).min(1, 'prompt needs at least one message')]),
  metadata: z.record(z.string(), z.unknown()).optional(),
  chosen: z.string().optional(),
  rejected: z.string().optional(),
  pairs: z.array(z.object({ chosen: z.string(), rejected: z.string() })).optional(),
});

export interface ReadPromptOptions {
  /** Field holding the reference answer (default `reference`). */
  referenceField?: string;
  /** Read a `rubric` field when present (refine starts from it). */
  acceptRubric?: boolean;
}

export async function* readPromptRecords(file: string, options: ReadPromptOptions = {}): AsyncGenerator<PromptReadRecord> {
  const referenceField = options.referenceField ?? 'reference';
  for await (const { line, text, error: lineError } of readLines(file)) {
    const parsed = parseLineJson(text, lineError);
    if (!parsed.ok) {
      yield { kind: 'invalid', line, error: new RubricateError('INPUT_INVALID', parsed.error, { file, line }) };
      continue;
    }
    const raw = parsed.value;
    const id = typeof raw === 'object' && raw !== null && 'id' in raw ? String((raw as { id: unknown }).id) : undefined;
    if (typeof raw === 'object' && raw !== null && !Array.isArray(raw) && (raw as { prompt?: unknown }).prompt === undefined) {
      yield { kind: 'invalid', line, id, error: new RubricateError('INPUT_INVALID', 'missing required field (expected a string or a list of messages)', { file, line, field: 'prompt' }) };
      continue;
    }
    const checked = promptLineSchema.safeParse(raw);
    if (!checked.success) {
      yield { kind: 'invalid', line, id, error: zodErrorToInputError(checked.error, { file, line }) };
      continue;
    }
    const value = checked.data as z.infer<typeof promptLineSchema> & Record<string, unknown>;
    const record: PromptRecord = {
      id: String(value.id),
      promptInput: value.prompt,
      prompt: normalizeMessages(value.prompt),
      line,
    };
    const reference = value[referenceField];
    if (reference !== undefined && reference !== null) {
      if (typeof reference !== 'string') {
        yield { kind: 'invalid', line, id: record.id, error: new RubricateError('INPUT_INVALID', 'reference must be a string', { file, line, field: referenceField }) };
        continue;
      }
      if (reference.trim() !== '') record.reference = reference;
    }
    if (options.acceptRubric && value.rubric !== undefined) {
      try {
        record.rubric = normalizeRubric(value.rubric, { file, line, fieldPrefix: 'rubric' });
      } catch (error) {
        yield { kind: 'invalid', line, id: record.id, error: error as RubricateError };
        continue;
      }
    }
    if (value.metadata) record.metadata = value.metadata;
    const pairs = [...(value.pairs ?? [])];
    if (value.chosen !== undefined || value.rejected !== undefined) {
      if (value.chosen === undefined || value.rejected === undefined) {
        yield { kind: 'invalid', line, id: record.id, error: new RubricateError('INPUT_INVALID', '`chosen` and `rejected` go together', { file, line, field: value.chosen === undefined ? 'chosen' : 'rejected' }) };
        continue;
      }
      pairs.unshift({ chosen: value.chosen, rejected: value.rejected });
    }
    if (pairs.length > 0) record.pairs = pairs;
    yield { kind: 'prompt', record, line };
  }
}

const responseLineSchema = z.union([
  z.looseObject({ id: z.union([z.string().min(1), z.number()]), response: z.string() }),
  z.looseObject({ id: z.union([z.string().min(1), z.number()]), responses: z.array(z.string()) }),
]);

/** Responses by prompt id, in file order. A bad line is an INPUT_INVALID error naming it. */
export async function readResponsesFile(file: string): Promise<Map<string, string[]>> {
  const responses = new Map<string, string[]>();
  for await (const { line, text, error: lineError } of readLines(file)) {
    const parsed = parseLineJson(text, lineError);
    if (!parsed.ok) throw new RubricateError('INPUT_INVALID', parsed.error, { file, line });
    const checked = responseLineSchema.safeParse(parsed.value);
    if (!checked.success) {
      throw new RubricateError('INPUT_INVALID', 'a responses line needs `id` and `response` (a string) or `responses` (a list of strings)', { file, line });
    }
    const value = checked.data as { id: string | number; response?: string; responses?: string[] };
    const id = String(value.id);
    const list = responses.get(id) ?? [];
    if (value.responses) list.push(...value.responses);
    else list.push(value.response!);
    responses.set(id, list);
  }
  return responses;
}
