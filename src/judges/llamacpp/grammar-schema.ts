/**
 * Turns a JSON schema (as `z.toJSONSchema` writes it) into the subset that node-llama-cpp's
 * grammar generator understands. Its generator does not reject unknown keywords: it silently
 * misreads them, which is worse. Left as they are:
 * - `anyOf` (every zod union, `.nullable()`) and `allOf` are ignored, and a schema with no `type`
 *   becomes the grammar for `null`;
 * - `{}` / `true` ("any value") also becomes `null`, and so does `additionalProperties: {}`;
 * - a `format` other than date, time or date-time forces the empty string (`z.email()` → `""`);
 * - `$ref` must point into `#/$defs/` (draft-07 `#/definitions/` falls back to "any").
 * So we rewrite those, and keep only the keywords the generator reads. Note that the generator
 * emits every listed property (it treats all of them as required), in the order given.
 */

import { isRecord } from '../../util/is-record.js';

type JsonSchema = Record<string, unknown>;

const supportedFormats = new Set(['date', 'time', 'date-time']);
const anyJsonValue: JsonSchema = {
  oneOf: [{ type: ['string', 'number', 'boolean', 'null'] }, { type: 'object', additionalProperties: true }, { type: 'array' }],
};

/** True for `{}`-like schemas that constrain nothing (annotations only). */
function isUnconstrained(schema: JsonSchema): boolean {
  const constraining = ['type', 'const', 'enum', 'anyOf', 'oneOf', 'allOf', '$ref', 'properties', 'items', 'prefixItems', 'additionalProperties'];
  return !constraining.some((key) => key in schema);
}

function rewriteReference(reference: string): string {
  if (reference.startsWith('#/definitions/')) return `#/$defs/${reference.slice('#/definitions/'.length)}`;
  return reference;
}

/** Folds `allOf` members into one schema: properties and required lists are merged, other keys last-wins. */
function mergeAllOf(schema: JsonSchema): JsonSchema {
  const members = (schema.allOf as unknown[]).filter(isRecord);
  const { allOf: _ignored, ...rest } = schema;
  const merged: JsonSchema = { ...rest };
  for (const member of members) {
    for (const [key, value] of Object.entries(member)) {
      if (key === 'properties' && isRecord(value)) {
        merged.properties = { ...(isRecord(merged.properties) ? merged.properties : {}), ...value };
      } else if (key === 'required' && Array.isArray(value)) {
        merged.required = [...new Set([...(Array.isArray(merged.required) ? merged.required : []), ...value])];
      } else if (!(key in merged)) {
        merged[key] = value;
      }
    }
  }
  return merged;
}

function convert(input: unknown): JsonSchema {
  if (input === true || input === undefined) return anyJsonValue;
  // `false` admits nothing; no grammar can say that, so the nearest safe choice is null.
  if (input === false) return { type: 'null' };
  if (!isRecord(input)) return anyJsonValue;
  let schema = input;
  if (Array.isArray(schema.allOf)) schema = mergeAllOf(schema);
  if (isUnconstrained(schema)) return anyJsonValue;

  const output: JsonSchema = {};
  if (typeof schema.description === 'string') output.description = schema.description;

  const definitions = { ...(isRecord(schema.definitions) ? schema.definitions : {}), ...(isRecord(schema.$defs) ? schema.$defs : {}) };
  if (Object.keys(definitions).length > 0) {
    output.$defs = Object.fromEntries(Object.entries(definitions).map(([name, definition]) => [name, convert(definition)]));
  }

  if (typeof schema.$ref === 'string') {
    output.$ref = rewriteReference(schema.$ref);
    return output;
  }
  if ('const' in schema && schema.const !== undefined) {
    output.const = schema.const;
    return output;
  }
  if (Array.isArray(schema.enum)) {
    output.enum = schema.enum;
    return output;
  }
  const alternatives = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (alternatives) {
    output.oneOf = alternatives.map((alternative) => convert(alternative));
    return output;
  }

  let type = schema.type;
  // OpenAPI-style `nullable: true`.
  if (schema.nullable === true && type !== undefined) type = [...new Set([...(Array.isArray(type) ? type : [type]), 'null'])];
  if (type === undefined) {
    if ('properties' in schema || 'additionalProperties' in schema) type = 'object';
    else if ('items' in schema || 'prefixItems' in schema) type = 'array';
  }
  // The generator only builds objects and arrays from a single `type`: split mixed lists into alternatives.
  if (Array.isArray(type) && type.length > 1 && (type.includes('object') || type.includes('array'))) {
    const { type: _ignored, nullable: _nullable, ...rest } = schema;
    const simple = type.filter((entry) => entry !== 'object' && entry !== 'array');
    const containers = type.filter((entry) => entry === 'object' || entry === 'array').map((entry) => convert({ ...rest, type: entry }));
    output.oneOf = simple.length > 0 ? [...containers, convert({ ...rest, type: simple })] : containers;
    return output;
  }
  if (Array.isArray(type) && type.length === 1) type = type[0];
  if (type !== undefined) output.type = type;
  if (type === 'object') convertObject(schema, output);
  else if (type === 'array') convertArray(schema, output);
  else if (type === 'string') convertString(schema, output);
  return output;
}

function convertObject(schema: JsonSchema, output: JsonSchema): void {
  if (isRecord(schema.properties)) {
    output.properties = Object.fromEntries(Object.entries(schema.properties).map(([name, property]) => [name, convert(property)]));
  }
  if (Array.isArray(schema.required)) output.required = schema.required;
  const additional = schema.additionalProperties;
  // `false` is what the generator does anyway when the key is absent.
  if (additional === true || (isRecord(additional) && isUnconstrained(additional))) output.additionalProperties = true;
  else if (isRecord(additional)) output.additionalProperties = convert(additional);
  else if (additional === undefined && !isRecord(schema.properties)) output.additionalProperties = true;
  copyNumbers(schema, output, ['minProperties', 'maxProperties']);
}

function convertArray(schema: JsonSchema, output: JsonSchema): void {
  if (Array.isArray(schema.prefixItems)) output.prefixItems = schema.prefixItems.map((item) => convert(item));
  if (schema.items === false) {
    // A closed tuple: exactly the prefix items.
    if (Array.isArray(schema.prefixItems)) output.maxItems = schema.prefixItems.length;
  } else if (schema.items !== undefined && schema.items !== true) {
    output.items = convert(schema.items);
  }
  copyNumbers(schema, output, ['minItems', 'maxItems']);
}

function convertString(schema: JsonSchema, output: JsonSchema): void {
  if (typeof schema.format === 'string' && supportedFormats.has(schema.format)) {
    output.format = schema.format;
  } else {
    copyNumbers(schema, output, ['minLength', 'maxLength']);
  }
}

function copyNumbers(from: JsonSchema, to: JsonSchema, keys: string[]): void {
  for (const key of keys) {
    if (typeof from[key] === 'number' && Number.isFinite(from[key])) to[key] = from[key];
  }
}

/** The grammar-ready copy of `schema`; the input is not modified. */
export function toGrammarJsonSchema(schema: Record<string, unknown>): Record<string, unknown> {
  return convert(schema);
}
