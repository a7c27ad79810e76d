/**
 * Our reply schemas (JSON Schema) → Gemini's `responseSchema`, a subset of the OpenAPI 3.0
 * schema object. Gemini rejects fields outside it (`additionalProperties`, `$schema`, `const`
 * …) with 400 "Unknown name", takes upper-case type names, and writes properties in
 * `propertyOrdering` order (which keeps the explanation before the verdict).
 */
import { RubricateError } from '../../errors.js';

const typeNames: Record<string, string> = { string: 'STRING', number: 'NUMBER', integer: 'INTEGER', boolean: 'BOOLEAN', array: 'ARRAY', object: 'OBJECT' };
const copied = ['description', 'format', 'minItems', 'maxItems', 'minimum', 'maximum', 'title', 'nullable'] as const;

const memo = new WeakMap<object, Record<string, unknown>>();

export function toGeminiSchema(schema: Record<string, unknown>): Record<string, unknown> {
  let converted = memo.get(schema);
  if (!converted) memo.set(schema, (converted = convert(schema, '$')));
  return converted;
}

function convert(schema: Record<string, unknown>, path: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let type = schema.type;
  if (Array.isArray(type)) {
    // ["string", "null"] → a nullable string.
    const kinds = type.filter((kind) => kind !== 'null');
    if (kinds.length !== 1) throw new RubricateError('CONFIG_INVALID', `Gemini response schemas allow one type at ${path}, got ${JSON.stringify(type)}`);
    if (kinds.length < type.length) out.nullable = true;
    type = kinds[0];
  }
  if (schema.const !== undefined) {
    type ??= typeof schema.const === 'string' ? 'string' : undefined;
    out.enum = [String(schema.const)];
  }
  if (typeof type === 'string') {
    const name = typeNames[type];
    if (!name) throw new RubricateError('CONFIG_INVALID', `Gemini response schemas have no type ${JSON.stringify(type)} (at ${path})`);
    out.type = name;
  }
  for (const key of copied) if (schema[key] !== undefined) out[key] = schema[key];
  if (Array.isArray(schema.enum)) {
    // Gemini enums are strings only.
    out.type = 'STRING';
    out.enum = schema.enum.map(String);
  }
  if (schema.properties && typeof schema.properties === 'object') {
    const properties: Record<string, unknown> = {};
    for (const [name, child] of Object.entries(schema.properties as Record<string, Record<string, unknown>>)) properties[name] = convert(child, `${path}.${name}`);
    out.properties = properties;
    out.propertyOrdering = Object.keys(properties);
    if (Array.isArray(schema.required)) out.required = schema.required;
  }
  if (schema.items && typeof schema.items === 'object') out.items = convert(schema.items as Record<string, unknown>, `${path}[]`);
  if (Array.isArray(schema.anyOf)) {
    // `anyOf: [X, {type: "null"}]` (an optional object) is Gemini's nullable X.
    const members = schema.anyOf as Array<Record<string, unknown>>;
    const others = members.filter((child) => child.type !== 'null');
    if (others.length < members.length) out.nullable = true;
    if (others.length === 1) return { ...convert(others[0], `${path}|0`), ...out };
    out.anyOf = others.map((child, index) => convert(child, `${path}|${index}`));
  }
  return out;
}
