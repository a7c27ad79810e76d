/**
 * The catalogue of deterministic checks offered to the generator: each registered check's
 * name, description and parameters (read from its zod schema), rendered compactly. A check
 * the generator proposes is kept only when the registry validates it.
 */
import { z } from 'zod';
import { checkRegistry, validateCheck } from '../checks/registry.js';
import type { CheckDefinition } from '../checks/types.js';
import type { CheckSpec } from '../rubric/schema.js';
import { safeParseJson } from '../util/json.js';

export interface CheckParameterInfo {
  name: string;
  required: boolean;
  /** Short type hint: `integer`, `string`, `boolean`, `"a" | "b"`, `string[]`, … */
  type: string;
}

export interface CheckCatalogueEntry {
  type: string;
  description: string;
  parameters: CheckParameterInfo[];
}

/** The checks offered to a generator: the check registry, or any collection of definitions (a Map's values). */
export type CheckRegistryLike = { values(): Iterable<Pick<CheckDefinition<any>, 'type' | 'description' | 'parameters'>> };

const catalogueMemo = new WeakMap<object, CheckCatalogueEntry[]>();

export function checkCatalogue(registry: CheckRegistryLike = checkRegistry): CheckCatalogueEntry[] {
  const memo = catalogueMemo.get(registry);
  if (memo) return memo;
  const entries = [...registry.values()].map((definition) => ({
    type: definition.type,
    description: definition.description,
    parameters: parameterInfo(definition.parameters),
  }));
  catalogueMemo.set(registry, entries);
  return entries;
}

function parameterInfo(schema: z.ZodType): CheckParameterInfo[] {
  let json: Record<string, unknown>;
  try {
    json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  } catch {
    return [];
  }
  const properties = (json.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set(Array.isArray(json.required) ? (json.required as string[]) : []);
  return Object.entries(properties).map(([name, property]) => ({ name, required: required.has(name), type: typeHint(property) }));
}

function typeHint(property: Record<string, unknown>): string {
  if (Array.isArray(property.enum)) return property.enum.map((value) => JSON.stringify(value)).join(' | ');
  if (Array.isArray(property.anyOf)) return (property.anyOf as Record<string, unknown>[]).map(typeHint).join(' | ');
  if (property.type === 'array') {
    const items = property.items as Record<string, unknown> | undefined;
    return `${items ? typeHint(items) : 'any'}[]`;
  }
  if (typeof property.type === 'string') return property.type;
  return 'any';
}

/** One line per check: `- count: <description> Parameters: unit ("words" | …), value (integer), relation? (…)`. */
export function renderCheckCatalogue(entries: readonly CheckCatalogueEntry[]): string {
  return entries
    .map((entry) => {
      const parameters = entry.parameters.map((parameter) => `${parameter.name}${parameter.required ? '' : '?'} (${parameter.type})`).join(', ');
      return `- ${entry.type}: ${entry.description}${parameters ? ` Parameters: ${parameters}.` : ' No parameters.'}`;
    })
    .join('\n');
}

export type ProposedCheckOutcome = { ok: true; check: CheckSpec } | { ok: false; reason: string };

/**
 * Turns a proposed `{type, parameters_json}` into a check spec the registry accepts, or the
 * reason it cannot be used. Parameters may come as a JSON string (what the strict schema
 * asks for) or as an object (servers that ignore the schema).
 */
export function resolveProposedCheck(
  proposal: { type: string; parameters_json?: unknown; parameters?: unknown },
  validate: (spec: CheckSpec) => { ok: true } | { ok: false; error: { message: string } } = validateCheck,
): ProposedCheckOutcome {
  let parameters: unknown = proposal.parameters_json ?? proposal.parameters ?? {};
  if (typeof parameters === 'string') {
    const trimmed = parameters.trim();
    if (trimmed === '') parameters = {};
    else {
      const parsed = safeParseJson(trimmed);
      if (!parsed.ok) return { ok: false, reason: `check "${proposal.type}": parameters are not valid JSON (${parsed.error})` };
      parameters = parsed.value;
    }
  }
  if (parameters === null) parameters = {};
  if (typeof parameters !== 'object' || Array.isArray(parameters)) {
    return { ok: false, reason: `check "${proposal.type}": parameters must be a JSON object` };
  }
  const { type: _ignored, ...rest } = parameters as Record<string, unknown>;
  const spec: CheckSpec = { type: proposal.type, ...rest };
  const verdict = validate(spec);
  if (!verdict.ok) return { ok: false, reason: verdict.error.message };
  return { ok: true, check: spec };
}
