/** Helpers shared by importers: reading side files of responses, JSON files, records as items. */
import { readFile } from 'node:fs/promises';
import { RubricateError } from '../errors.js';
import { isUtf8 } from 'node:buffer';
import { decodeLine, parseLineJson, readLines } from '../util/jsonl.js';
import { parseInputJson } from '../util/json.js';
import { isCsvFileName, readCsvRecords } from '../util/csv.js';
import { describeNonJsonDocument, describeNonJsonl, wrongFileType } from '../util/file-kind.js';
import { inputLimits } from '../util/input-limits.js';
import { normalizeRubric, zodErrorToInputError } from '../rubric/normalize.js';
import type { Item, Message, RubricInput } from '../rubric/schema.js';
import type { ImportRecord } from '../rubric/records.js';

export interface ResponseEntry {
  response: string;
  /** The line's own id, when it gives one (several responses per prompt). */
  id?: string;
  line: number;
}

/**
 * Reads a responses JSONL (`{<key>, response, id?}` per line) into lists by key. Several
 * lines may share a key (several samples or models per prompt); each becomes an item.
 * Bad lines are returned as errors so the run can report them and continue.
 */
export async function loadResponses(
  file: string,
  keyFields: readonly string[],
): Promise<{ byKey: Map<string, ResponseEntry[]>; errors: RubricateError[] }> {
  const byKey = new Map<string, ResponseEntry[]>();
  const errors: RubricateError[] = [];
  for await (const read of readJsonObjects(file)) {
    if ('error' in read) {
      errors.push(read.error);
      continue;
    }
    const { line, value: record } = read;
    const keyField = keyFields.find((field) => record[field] !== undefined && record[field] !== null);
    if (!keyField) {
      const keys = Object.keys(record).slice(0, 6).join(', ');
      errors.push(new RubricateError('INPUT_INVALID', `missing key field (one of ${keyFields.join(', ')}); the line has ${keys || 'no keys'}`, { file, line, field: keyFields[0] }));
      continue;
    }
    const response = responseText(record.response ?? record.completion ?? record.output);
    if (response === undefined) {
      errors.push(new RubricateError('INPUT_INVALID', 'missing or non-string `response`', { file, line, field: 'response' }));
      continue;
    }
    const key = String(record[keyField]);
    const entry: ResponseEntry = { response, line };
    if (record.id !== undefined && keyField !== 'id') entry.id = String(record.id);
    let list = byKey.get(key);
    if (!list) byKey.set(key, (list = []));
    list.push(entry);
  }
  return { byKey, errors };
}

/** A response given as a string, or as chat messages whose last assistant turn is the response. */
export function responseText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    const last = [...value].reverse().find((message) => message && typeof message === 'object' && (message as { role?: unknown }).role === 'assistant');
    const content = (last as { content?: unknown } | undefined)?.content;
    if (typeof content === 'string') return content;
  }
  return undefined;
}

/** Item ids for the responses of one prompt: the line's id, else the prompt id (#n when several). */
export function responseItemId(promptId: string, entry: ResponseEntry, index: number, count: number): string {
  if (entry.id !== undefined) return entry.id;
  return count > 1 ? `${promptId}#${index + 1}` : promptId;
}

/** Reads a whole JSON file (for formats that are one JSON document, not JSONL). */
export async function readJsonFile(file: string): Promise<unknown> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EISDIR') throw new RubricateError('INPUT_UNREADABLE', 'is a folder, not a file', { file });
    throw new RubricateError('INPUT_UNREADABLE', code === 'ENOENT' ? 'file not found' : (error as Error).message, { file });
  }
  let text: string;
  try {
    text = decodeDocument(bytes, file);
  } catch (error) {
    throw wrongTypeOr(error, describeNonJsonDocument(file), file);
  }
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const parsed = parseInputJson(body);
  if (!parsed.ok) {
    const place = placeOfJsonError(body, parsed.error);
    const message = parsed.error.startsWith('nested deeper') ? parsed.error : `not valid JSON${place ? ` at line ${place.line}, column ${place.column}` : ''}: ${parsed.error}`;
    throw wrongTypeOr(new RubricateError('INPUT_INVALID', message, { file, ...(place ? { line: place.line } : {}) }), describeNonJsonDocument(file), file);
  }
  return parsed.value;
}

/** The line and column of a JSON syntax error, from the character position the parser names. */
function placeOfJsonError(text: string, error: string): { line: number; column: number } | undefined {
  const position = /at position (\d+)/.exec(error);
  if (!position) return undefined;
  const before = text.slice(0, Number(position[1]));
  const lineStart = before.lastIndexOf('\n') + 1;
  return { line: before.split('\n').length, column: before.length - lineStart + 1 };
}

/** The wrong-type diagnosis when the file is of another kind, else the reader's own error. */
function wrongTypeOr(error: unknown, looksLike: string | undefined, file: string, expected = 'one JSON document'): unknown {
  return looksLike ? wrongFileType(file, looksLike, expected) : error;
}

/** A whole file's text in the input encoding; strict UTF-8 names the first line that is not. */
function decodeDocument(bytes: Buffer, file: string): string {
  if (inputLimits().encoding === 'latin1') return bytes.toString('latin1');
  if (isUtf8(bytes)) return bytes.toString('utf8');
  let line = 1;
  for (let start = 0; start <= bytes.length; line += 1) {
    const newline = bytes.indexOf(10, start);
    const end = newline === -1 ? bytes.length : newline;
    const decoded = decodeLine(bytes.subarray(start, end), file, line);
    if ('error' in decoded) throw decoded.error;
    if (newline === -1) break;
    start = newline + 1;
  }
  throw new RubricateError('INPUT_INVALID', 'not valid UTF-8 text (if the file is Latin-1, give --encoding latin1)', { file, field: 'encoding' });
}

/**
 * Streams the records of a JSONL file (or of a CSV/TSV file, by its name) as objects; lines that
 * are not JSON objects come back as errors. When the very first record is not one and the file
 * looks like something else (a JSON array, a CSV export, a binary file), that is one
 * INPUT_WRONG_TYPE error naming the file, not an error per line.
 */
export async function* readJsonObjects(file: string): AsyncGenerator<{ line: number; value: Record<string, unknown> } | { line: number; error: RubricateError }> {
  if (isCsvFileName(file)) {
    yield* readCsvRecords(file);
    return;
  }
  let first = true;
  for await (const { line, text, error: lineError } of readLines(file)) {
    const parsed = parseLineJson(text, lineError);
    let error: RubricateError | undefined;
    if (!parsed.ok) error = new RubricateError('INPUT_INVALID', parsed.error, { file, line });
    else if (typeof parsed.value !== 'object' || parsed.value === null || Array.isArray(parsed.value)) error = new RubricateError('INPUT_INVALID', 'expected a JSON object', { file, line });
    if (error && first) {
      const looksLike = describeNonJsonl(file);
      if (looksLike) throw wrongFileType(file, looksLike, 'JSONL (one JSON object per line)');
    }
    first = false;
    if (error) yield { line, error };
    else yield { line, value: (parsed as { value: Record<string, unknown> }).value };
  }
}

export function invalid(error: unknown, line: number, id?: string): ImportRecord {
  const wrapped = RubricateError.isInstance(error) ? error : new RubricateError('INPUT_INVALID', String(error), { line });
  return id === undefined ? { kind: 'invalid', error: wrapped, line } : { kind: 'invalid', error: wrapped, line, id };
}

export function fieldError(message: string, file: string, line: number, field: string): RubricateError {
  return new RubricateError('INPUT_INVALID', message, { file, line, field });
}

/** Builds and validates an item from an importer's pieces; validation errors name the field. */
export function buildItem(parts: {
  id: string;
  prompt: Message[];
  response: string;
  rubric: RubricInput;
  reference?: string;
  tags?: string[];
  metadata?: Record<string, unknown>;
  file: string;
  line: number;
}): Item {
  const rubric = normalizeRubric(parts.rubric, { file: parts.file, line: parts.line, fieldPrefix: 'rubric' });
  if (parts.tags?.includes('__proto__')) throw new RubricateError('INPUT_INVALID', 'the tag "__proto__" is not allowed', { file: parts.file, line: parts.line, field: 'tags' });
  const item: Item = { id: parts.id, prompt: parts.prompt, response: parts.response, rubric };
  if (parts.reference !== undefined) item.reference = parts.reference;
  if (parts.tags && parts.tags.length > 0) item.tags = parts.tags;
  if (parts.metadata) item.metadata = parts.metadata;
  return item;
}

const sampleCount = 3;

/** `"a", "b", "c" and 7 more`. */
function quotedList(samples: readonly string[], total: number): string {
  const shown = samples.map((sample) => JSON.stringify(sample.length > 40 ? `${sample.slice(0, 40)}…` : sample)).join(', ');
  return total > samples.length ? `${shown} and ${total - samples.length} more` : shown;
}

/**
 * Joins examples with their responses: yields one item per response of each example, an
 * error when an example has none, and the responses file's own bad lines. Responses whose
 * key matches no example are counted in a warning so nothing is dropped silently.
 */
export type ExampleEntry<Example> = { line: number; example: Example; key: string } | { line: number; error: RubricateError; key?: string };

/** Whether each record in turn, counted from 0, is one of shard I/N's (`ordinal % N === I`); every record when there is no shard. */
export function shardMembership(shard: { index: number; count: number } | undefined): () => boolean {
  let ordinal = 0;
  return () => {
    const member = !shard || ordinal % shard.count === shard.index;
    ordinal += 1;
    return member;
  };
}

export async function* joinResponses<Example>(options: {
  examples: AsyncIterable<ExampleEntry<Example>>;
  responsesFile: string;
  keyFields: readonly string[];
  makeItem: (example: Example, response: string, itemId: string, line: number) => Item | Promise<Item>;
  sourceFile: string;
  onWarning?: (message: string) => void;
  /** Yield only this shard's records, making no item of the others. */
  shard?: { index: number; count: number };
}): AsyncGenerator<ImportRecord> {
  const { byKey, errors } = await loadResponses(options.responsesFile, options.keyFields);
  const inShard = shardMembership(options.shard);
  for (const error of errors) if (inShard()) yield invalid(error, error.details.line ?? 0);
  const responseKeys = byKey.size > 0 ? ` (its keys are ${quotedList([...byKey.keys()].slice(0, sampleCount), byKey.size)})` : ' (it has no usable line)';
  const used = new Set<string>();
  // A few example keys, to show beside unmatched response keys.
  const exampleKeySample = new Set<string>();
  let exampleCount = 0;
  for await (const entry of options.examples) {
    if ('error' in entry) {
      if (inShard()) yield invalid(entry.error, entry.line, entry.key);
      continue;
    }
    exampleCount += 1;
    if (exampleKeySample.size < sampleCount) exampleKeySample.add(entry.key);
    const responses = byKey.get(entry.key);
    if (!responses) {
      if (inShard()) yield invalid(
        new RubricateError('INPUT_INVALID', `no response for "${entry.key}" in ${options.responsesFile}${responseKeys}`, { file: options.sourceFile, line: entry.line, field: 'response' }),
        entry.line,
        entry.key,
      );
      continue;
    }
    used.add(entry.key);
    for (let index = 0; index < responses.length; index += 1) {
      if (!inShard()) continue;
      const itemId = responseItemId(entry.key, responses[index], index, responses.length);
      try {
        yield { kind: 'item', item: await options.makeItem(entry.example, responses[index].response, itemId, entry.line), line: entry.line };
      } catch (error) {
        yield invalid(error, entry.line, itemId);
      }
    }
  }
  let unmatched = 0;
  const unmatchedKeys: string[] = [];
  for (const [key, responses] of byKey) {
    if (used.has(key)) continue;
    unmatched += responses.length;
    if (unmatchedKeys.length < sampleCount) unmatchedKeys.push(key);
  }
  if (unmatched > 0) {
    const exampleKeys = [...exampleKeySample].slice(0, sampleCount);
    options.onWarning?.(
      `${unmatched} response line(s) in ${options.responsesFile} match no example in ${options.sourceFile}: ` +
        `their keys (${options.keyFields.join(' or ')}) are ${quotedList(unmatchedKeys, byKey.size - used.size)}` +
        (exampleKeys.length > 0 ? `; the examples' are ${quotedList(exampleKeys, exampleCount)}` : ''),
    );
  }
}

/**
 * The common shape of benchmark importers: examples keyed by an id, each with a rubric;
 * responses from `--responses` joined on that key, or carried by the example itself.
 */
export async function* importExamples<Example>(options: {
  examples: AsyncIterable<ExampleEntry<Example>>;
  file: string;
  importOptions: import('./types.js').ImportOptions;
  responseKeyFields: readonly string[];
  ownResponse?: (example: Example) => string | undefined;
  makeItem: (example: Example, response: string, itemId: string, line: number) => Item;
}): AsyncGenerator<ImportRecord> {
  if (options.importOptions.responses) {
    yield* joinResponses({
      examples: options.examples,
      responsesFile: options.importOptions.responses,
      keyFields: options.responseKeyFields,
      makeItem: options.makeItem,
      sourceFile: options.file,
      onWarning: options.importOptions.onWarning,
    });
    return;
  }
  for await (const entry of options.examples) {
    if ('error' in entry) {
      yield invalid(entry.error, entry.line, entry.key);
      continue;
    }
    const response = options.ownResponse?.(entry.example);
    if (response === undefined && options.importOptions.withoutResponses) {
      try {
        yield { kind: 'item', item: options.makeItem(entry.example, '', entry.key, entry.line), line: entry.line, withoutResponse: true };
      } catch (error) {
        yield invalid(error, entry.line, entry.key);
      }
      continue;
    }
    if (response === undefined) {
      yield invalid(
        new RubricateError('INPUT_INVALID', 'record has no response: give --responses FILE (JSONL with the record id and `response`)', {
          file: options.file,
          line: entry.line,
          field: 'response',
        }),
        entry.line,
        entry.key,
      );
      continue;
    }
    try {
      yield { kind: 'item', item: options.makeItem(entry.example, response, entry.key, entry.line), line: entry.line };
    } catch (error) {
      yield invalid(error, entry.line, entry.key);
    }
  }
}

/** Streams JSONL records through a zod schema, yielding example entries keyed by `keyOf`. */
export async function* parsedExamples<Schema extends import('zod').ZodType>(
  file: string,
  schema: Schema,
  keyOf: (example: import('zod').infer<Schema>, line: number) => string,
): AsyncGenerator<ExampleEntry<import('zod').infer<Schema>>> {
  for await (const entry of readJsonObjects(file)) {
    if ('error' in entry) {
      yield entry;
      continue;
    }
    const parsed = schema.safeParse(entry.value);
    if (!parsed.success) yield { line: entry.line, error: zodErrorToInputError(parsed.error as import('zod').ZodError, { file, line: entry.line }) };
    else yield { line: entry.line, example: parsed.data, key: keyOf(parsed.data, entry.line) };
  }
}
