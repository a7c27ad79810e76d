/**
 * IFEval importer: `input_data.jsonl` (key, prompt, instruction_id_list, kwargs) joined
 * with a responses JSONL (`{prompt, response}` joined on the exact prompt text, as
 * IFEval's own evaluator does, or `{key, response}`). Each prompt becomes an item whose
 * rubric has one hard-rule criterion per instruction, decided by the IFEval check of
 * the same id.
 */
import { z } from 'zod';
import { checkRegistry, describeCheck, validateCheck } from '../checks/registry.js';
import { RubricateError } from '../errors.js';
import { zodIssueError } from '../util/zod-issue.js';
import { readJsonObjects } from './shared.js';
import type { CheckSpec, Criterion, Item } from '../rubric/schema.js';
import type { ImportOptions, Importer } from './types.js';
import type { ImportRecord } from '../rubric/records.js';

const inputLineSchema = z.object({
  key: z.union([z.number().int(), z.string().min(1)]),
  prompt: z.string(),
  instruction_id_list: z.array(z.string().min(1)).min(1, 'needs at least one instruction'),
  kwargs: z.array(z.record(z.string(), z.unknown())),
});

const responseLineSchema = z.object({
  key: z.union([z.number().int(), z.string().min(1)]).optional(),
  prompt: z.string().optional(),
  response: z.string(),
});

interface ResponseIndex {
  byPrompt: Map<string, string>;
  byKey: Map<string, string>;
  invalid: ImportRecord[];
}

async function loadResponses(file: string): Promise<ResponseIndex> {
  const index: ResponseIndex = { byPrompt: new Map(), byKey: new Map(), invalid: [] };
  for await (const entry of readJsonObjects(file)) {
    const line = entry.line;
    if ('error' in entry) {
      index.invalid.push({ kind: 'invalid', line, error: entry.error });
      continue;
    }
    const result = responseLineSchema.safeParse(entry.value);
    if (!result.success) {
      index.invalid.push({ kind: 'invalid', line, error: zodIssueError(result.error, { indexed: true, details: { file, line } }) });
      continue;
    }
    const { key, prompt, response } = result.data;
    if (key === undefined && prompt === undefined) {
      index.invalid.push({
        kind: 'invalid',
        line,
        error: new RubricateError('INPUT_INVALID', 'a response line needs `prompt` or `key`', { file, line, field: 'prompt' }),
      });
      continue;
    }
    // Later lines win, as in IFEval's prompt → response dictionary.
    if (key !== undefined) index.byKey.set(String(key), response);
    if (prompt !== undefined) index.byPrompt.set(prompt, response);
  }
  return index;
}

function withoutNulls(kwargs: Record<string, unknown>): Record<string, unknown> {
  const cleaned: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(kwargs)) if (value !== null) cleaned[name] = value;
  return cleaned;
}

type InputLine = z.infer<typeof inputLineSchema>;
type InvalidRecord = (message: string, field?: string, id?: string) => ImportRecord;

/** One hard-rule criterion per instruction, decided by its IFEval check, or the record of the first instruction that cannot be. */
function instructionCriteria(input: InputLine, id: string, invalid: InvalidRecord): Criterion[] | ImportRecord {
  const criteria: Criterion[] = [];
  const seen = new Map<string, number>();
  for (const [position, instructionId] of input.instruction_id_list.entries()) {
    const definition = checkRegistry.find(instructionId);
    if (!definition || definition.family !== 'ifeval') {
      return invalid(`unknown IFEval instruction id "${instructionId}"`, `instruction_id_list[${position}]`, id);
    }
    const check: CheckSpec = { type: instructionId, ...withoutNulls(input.kwargs[position]) };
    const validation = validateCheck(check);
    if (!validation.ok) {
      const field = validation.error.details.field;
      return invalid(validation.error.message, `kwargs[${position}]${field && field !== 'type' ? `.${field}` : ''}`, id);
    }
    const occurrence = (seen.get(instructionId) ?? 0) + 1;
    seen.set(instructionId, occurrence);
    criteria.push({
      id: occurrence === 1 ? instructionId : `${instructionId}#${occurrence}`,
      text: describeCheck(check),
      points: 1,
      tags: [`instruction:${instructionId}`, `instruction_group:${instructionId.split(':')[0]}`],
      kind: 'hard_rule',
      check,
    });
  }
  return criteria;
}

/** The record of one input line: its item with its response joined, or why it has none. */
function inputRecord(value: unknown, line: number, source: string, responses: ResponseIndex | undefined, responsesFile: string | undefined): ImportRecord {
  const invalid: InvalidRecord = (message, field, id) => ({
    kind: 'invalid',
    line,
    ...(id === undefined ? {} : { id }),
    error: new RubricateError('INPUT_INVALID', message, { file: source, line, ...(field ? { field } : {}) }),
  });
  const result = inputLineSchema.safeParse(value);
  if (!result.success) return { kind: 'invalid', line, error: zodIssueError(result.error, { indexed: true, omitEmptyField: true, details: { file: source, line } }) };
  const input = result.data;
  const id = String(input.key);
  if (input.kwargs.length !== input.instruction_id_list.length) {
    return invalid(`kwargs has ${input.kwargs.length} entries for ${input.instruction_id_list.length} instructions`, 'kwargs', id);
  }
  const criteria = instructionCriteria(input, id, invalid);
  if (!Array.isArray(criteria)) return criteria;

  const response = responses ? (responses.byKey.get(id) ?? responses.byPrompt.get(input.prompt)) : undefined;
  if (response === undefined && !responses) {
    return { kind: 'item', item: { id, prompt: [{ role: 'user', content: input.prompt }], response: '', rubric: { id: `ifeval:${id}`, criteria }, metadata: { benchmark: 'ifeval', key: input.key } }, line, withoutResponse: true };
  }
  if (response === undefined) return invalid(`no response for this prompt in ${responsesFile}`, 'response', id);
  const item: Item = {
    id,
    prompt: [{ role: 'user', content: input.prompt }],
    response,
    rubric: { id: `ifeval:${id}`, criteria },
    metadata: { benchmark: 'ifeval', key: input.key },
  };
  return { kind: 'item', item, line };
}

async function* readIfeval(source: string, options: ImportOptions): AsyncGenerator<ImportRecord> {
  if (!options.responses && !options.withoutResponses) {
    throw new RubricateError('CONFIG_INVALID', 'the ifeval format needs a responses file: --responses FILE (JSONL {prompt, response} or {key, response})', {
      field: 'responses',
    });
  }
  const responsesFile = options.responses;
  const responses = responsesFile ? await loadResponses(responsesFile) : undefined;
  if (responses) yield* responses.invalid;

  for await (const entry of readJsonObjects(source)) {
    if ('error' in entry) yield { kind: 'invalid', line: entry.line, error: entry.error };
    else yield inputRecord(entry.value, entry.line, source, responses, responsesFile);
  }
}

export const ifevalImporter: Importer = {
  name: 'ifeval',
  accepts: ['responses'],
  defaultScoring: 'ifeval',
  description:
    'IFEval input_data.jsonl joined with a responses JSONL ({prompt, response} or {key, response}); one hard-rule criterion per instruction, decided by the IFEval checks.',
  read: readIfeval,
};
