/**
 * `scripted:met`, `scripted:unmet`, `scripted:mixed`: a judge that asks no model. Each reply is
 * made up to fit what the request asks for (its JSON schema, or a judge protocol's own format),
 * so every command can be tried, and a pipeline's wiring tested, with no key, network or model
 * file. It is labelled wherever it shows: its provenance (`scripted:…`, model `scripted`) and every
 * explanation it writes say that no model was asked. `rubricate fake-judge` serves the same
 * replies over HTTP, as an OpenAI-compatible endpoint.
 */
import { createHash } from 'node:crypto';
import { RubricateError } from '../errors.js';
import type { Judge, JudgeRequest, TokenProbability } from './types.js';
import { scriptedLabel } from '../util/made-up.js';

export const scriptedVerdicts = ['met', 'unmet', 'mixed'] as const;
/** Every criterion met (the top of every scale), none, or each one decided by a hash of its request. */
export type ScriptedVerdicts = (typeof scriptedVerdicts)[number];

/** The text every made-up explanation and string carries (one definition, beside the rule that reads it). */
export { scriptedLabel };

export function parseScriptedVerdicts(target: string): ScriptedVerdicts {
  const name = target === '' ? 'mixed' : target;
  if ((scriptedVerdicts as readonly string[]).includes(name)) return name as ScriptedVerdicts;
  throw new RubricateError('CONFIG_INVALID', `judge spec "scripted:${target}": the scripted judge answers ${scriptedVerdicts.map((verdicts) => `scripted:${verdicts}`).join(', ')}`, { field: 'judge' });
}

/** Whether a choice leans to "met" (the top of a scale, the last member of a list of labels). */
function leansMet(verdicts: ScriptedVerdicts, seed: string, path: string): boolean {
  if (verdicts !== 'mixed') return verdicts === 'met';
  return createHash('sha256').update(seed).update('\0').update(path).digest()[0] % 2 === 0;
}

/** The members of a required `label` enum of an array's object items (a listwise reply's entries), if it has one. */
function entryLabels(items: Record<string, unknown>): unknown[] | undefined {
  const label = (items.properties as Record<string, Record<string, unknown>> | undefined)?.label;
  const required = Array.isArray(items.required) && items.required.includes('label');
  return required && Array.isArray(label?.enum) && label.enum.length > 0 ? label.enum : undefined;
}

/**
 * A value that satisfies a JSON schema: met takes the last enum member and the maximum, unmet
 * the first and the minimum; arrays get their fewest items (at least one), except an array of
 * labelled entries (a listwise reply: items with a required `label` enum), which gets one entry per label;
 * an object that may be null is null.
 */
export function scriptedValue(schema: Record<string, unknown>, verdicts: ScriptedVerdicts, seed: string, path = ''): unknown {
  const met = () => leansMet(verdicts, seed, path);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return met() ? schema.enum.at(-1) : schema.enum[0];
  if (schema.const !== undefined) return schema.const;
  const choices = (schema.anyOf ?? schema.oneOf) as Array<Record<string, unknown>> | undefined;
  if (choices) {
    const chosen = choices.find((choice) => choice.type !== 'null') ?? choices[0];
    // An optional part (a generated criterion's check: null or an object) is left out: a made-up
    // one would name parameters no check accepts, and be dropped with a warning.
    if (choices.some((choice) => choice.type === 'null') && (chosen.type === 'object' || chosen.properties)) return null;
    return scriptedValue(chosen, verdicts, seed, path);
  }
  const type = Array.isArray(schema.type) ? (schema.type as unknown[]).find((entry) => entry !== 'null') : schema.type;
  if (type === 'object' || schema.properties) {
    const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
    return Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, scriptedValue(property, verdicts, seed, `${path}.${name}`)]));
  }
  if (type === 'array') {
    const items = (schema.items ?? {}) as Record<string, unknown>;
    const labels = entryLabels(items);
    // A listwise reply lists one entry per response shown (its `label` enum), whatever the group's size.
    if (labels) return labels.slice(0, Number(schema.maxItems ?? labels.length)).map((label, index) => ({ ...(scriptedValue(items, verdicts, seed, `${path}[${index}]`) as Record<string, unknown>), label }));
    const count = Math.max(1, Number(schema.minItems ?? 1));
    return Array.from({ length: count }, (_, index) => withDistinctKey(scriptedValue(items, verdicts, seed, `${path}[${index}]`), items, index, count));
  }
  if (type === 'boolean') return met();
  if (type === 'integer' || type === 'number') {
    const high = Number(schema.maximum ?? 1);
    const low = Number(schema.minimum ?? 0);
    return met() ? high : low;
  }
  // Strings differ by where they stand, so a made-up list (a generated rubric) has no duplicates.
  return path === '' || path.endsWith('explanation') ? scriptedLabel : `${scriptedLabel} (${path.slice(1)})`;
}

/**
 * Entries of a list keyed by one of their members (a listwise reply: one entry per response
 * label) each take another value of that member's enum, in order, when there is one per entry:
 * a made-up reply names every response once, as a real one must.
 */
function withDistinctKey(value: unknown, items: Record<string, unknown>, index: number, count: number): unknown {
  const properties = (items.properties ?? {}) as Record<string, Record<string, unknown>>;
  const key = Object.entries(properties).find(([, property]) => Array.isArray(property.enum) && property.enum.length === count)?.[0];
  if (key === undefined || count < 2 || typeof value !== 'object' || value === null) return value;
  return { ...(value as Record<string, unknown>), [key]: (properties[key].enum as unknown[])[index] };
}

/** R3's prompt shows its reply's JSON schema after this line. */
const r3FormatLine = '### OUTPUT FORMAT\nReturn a JSON response in the following format:\n\n';

/**
 * The reply in the format of a judge protocol the prompt is written in (`--judge-protocol`:
 * Prometheus' and Selene's result lines, R3's shown schema, Lynx's PASS/FAIL), if it is one.
 */
function protocolReply(seed: string, verdicts: ScriptedVerdicts): string | undefined {
  const met = leansMet(verdicts, seed, '');
  if (/\[RESULT\] \(Either "A" or "B"\)/.test(seed)) return `Feedback: ${scriptedLabel}. [RESULT] ${met ? 'A' : 'B'}`;
  if (/\[RESULT\] \(an integer number between 1 and 5\)/.test(seed)) return `Feedback: ${scriptedLabel}. [RESULT] ${met ? 5 : 1}`;
  const selene = /\*\*Result:\*\* <(an integer between 1 and 5|Yes or No|A or B)>/.exec(seed);
  if (selene) {
    const [high, low] = selene[1] === 'Yes or No' ? ['Yes', 'No'] : selene[1] === 'A or B' ? ['A', 'B'] : ['5', '1'];
    return `**Reasoning:** ${scriptedLabel}.\n\n**Result:** ${met ? high : low}`;
  }
  const r3 = seed.indexOf(r3FormatLine);
  if (r3 >= 0) {
    const shown = seed.slice(r3 + r3FormatLine.length).split('\n', 1)[0];
    try {
      return JSON.stringify(scriptedValue(JSON.parse(shown) as Record<string, unknown>, verdicts, seed));
    } catch {
      return undefined;
    }
  }
  if (seed.includes('QUESTION (THIS DOES NOT COUNT AS BACKGROUND INFORMATION)')) return JSON.stringify({ REASONING: [scriptedLabel], SCORE: met ? 'PASS' : 'FAIL' });
  return undefined;
}

/** The reply text to a judge (or generator) request. */
export function scriptedReplyText(request: Pick<JudgeRequest, 'messages' | 'output'>, verdicts: ScriptedVerdicts): string {
  const seed = request.messages.map((message) => message.content).join('\n');
  if (request.output) return JSON.stringify(scriptedValue(request.output.schema, verdicts, seed));
  return protocolReply(seed, verdicts) ?? JSON.stringify({ explanation: scriptedLabel, criteria_met: leansMet(verdicts, seed, '.criteria_met') });
}

/**
 * Token probabilities of a scripted reply (`--verdict probability`, `expected-score`): words,
 * numbers and single marks as tokens, each one certain (the reply is made up, not sampled), so
 * P(met) is 1 or 0 as the reply says.
 */
export function scriptedTokenProbabilities(text: string): TokenProbability[] {
  return [...text.matchAll(/[A-Za-z_]+|\d+|\s+|[^\sA-Za-z_\d]/g)].map(([token]) => ({ token, logprob: 0, top: [{ token, logprob: 0 }] }));
}

export function createScriptedJudge(verdicts: ScriptedVerdicts): Judge {
  return {
    // The variant names the version of the made-up replies: a cache never serves an older version's.
    provenance: { id: `scripted:${verdicts}`, model: 'scripted', variant: 'replies-2' },
    capabilities: { images: true, tokenProbabilities: true },
    async complete(request) {
      const text = scriptedReplyText(request, verdicts);
      const inputTokens = Math.ceil(request.messages.reduce((total, message) => total + message.content.length, 0) / 4);
      return { text, usage: { inputTokens, outputTokens: Math.ceil(text.length / 4), cachedInputTokens: 0 }, finishReason: 'stop', ...(request.logprobs ? { tokenProbabilities: scriptedTokenProbabilities(text) } : {}) };
    },
  };
}
