/**
 * The local judge's grammars: llama.cpp grammars built from reply schemas (kept per schema, a
 * few dozen at most), and the reply shapes decoded one value at a time with the JSON around the
 * values forced.
 */
import { RubricateError } from '../../errors.js';
import { isRecord } from '../../util/is-record.js';
import { canonicalJson } from '../../util/json.js';
import { toGrammarJsonSchema } from './grammar-schema.js';
import { describe } from './local-errors.js';

type Llama = import('node-llama-cpp').Llama;
type LlamaGrammar = import('node-llama-cpp').LlamaGrammar;

const grammarCacheLimit = 32;
/** node-llama-cpp's JSON grammars end with four newlines; stop there if a reply gets that far. */
export const grammarEndTrigger = '\n\n\n\n';

/** The grammars one model has built, by schema. */
export interface GrammarCache {
  readonly llama: Llama;
  readonly grammars: Map<string, LlamaGrammar>;
}

export async function grammarFor(cache: GrammarCache, schema: Record<string, unknown>): Promise<LlamaGrammar> {
  const { llama, grammars } = cache;
  const key = canonicalJson(schema);
  const cached = grammars.get(key);
  if (cached) return cached;
  let grammar: LlamaGrammar;
  try {
    grammar = await llama.createGrammarForJsonSchema(toGrammarJsonSchema(schema) as Parameters<typeof llama.createGrammarForJsonSchema>[0]);
  } catch (error) {
    throw new RubricateError('JUDGE_REQUEST_REJECTED', `the output schema cannot be turned into a llama.cpp grammar: ${describe(error)}`, { field: 'output.schema' }, { cause: error });
  }
  if (grammars.size >= grammarCacheLimit) grammars.delete(grammars.keys().next().value as string);
  grammars.set(key, grammar);
  return grammar;
}

export type ReplyField = { name: string; kind: 'boolean' } | { name: string; kind: 'string'; schema: Record<string, unknown> };

/**
 * The fields of a reply schema that can be decoded one value at a time: an object whose
 * properties are all booleans or strings (a string enum included), in schema order (the order
 * the whole-reply grammar writes them). Anything else (numbers, nested values, open objects)
 * takes the whole-reply grammar.
 */
export function fieldByFieldShape(schema: Record<string, unknown>): ReplyField[] | undefined {
  const properties = schema.properties;
  if (schema.type !== 'object' || !isRecord(properties)) return undefined;
  if (schema.additionalProperties !== undefined && schema.additionalProperties !== false) return undefined;
  const fields: ReplyField[] = [];
  for (const [name, property] of Object.entries(properties)) {
    if (!isRecord(property)) return undefined;
    const isStringEnum = Array.isArray(property.enum) && property.enum.length > 0 && property.enum.every((value) => typeof value === 'string');
    if (property.type === 'boolean' && property.enum === undefined && property.const === undefined) fields.push({ name, kind: 'boolean' });
    else if ((property.type === 'string' && property.const === undefined) || isStringEnum) fields.push({ name, kind: 'string', schema: property });
    else return undefined;
  }
  return fields.length > 0 ? fields : undefined;
}

/** The JSON the judge writes around the values: before each field's value, and the closing brace. */
export function forcedReplyPieces(fields: readonly ReplyField[]): string[] {
  return [...fields.map((field, index) => `${index === 0 ? '{' : ', '}${JSON.stringify(field.name)}: `), '}'];
}
