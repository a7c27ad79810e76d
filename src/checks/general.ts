/**
 * General-purpose deterministic checks for rubric criteria that state a verifiable
 * constraint: patterns, required or banned text, counts, openings and endings, JSON
 * (optionally against a JSON Schema) and language. They ignore strict/loose mode.
 */
import { createRequire } from 'node:module';
import type { Ajv as AjvInstance, ValidateFunction } from 'ajv';
import { z } from 'zod';
import { canonicalJson, safeParseJson } from '../util/json.js';
import { langdetectLanguages } from './ifeval/languages.js';
import { textFacts } from './text-facts.js';
import { pythonStrip } from './text/python-text.js';
import type { CheckDefinition } from './types.js';
import { perParameters } from './per-parameters.js';
import { compiledPattern, refinePatternCompiles } from './regex-pattern.js';

function quoteList(texts: string[]): string {
  return texts.map((text) => `"${text}"`).join(', ');
}

// ---------------------------------------------------------------- regex

const regexFlagsSchema = z
  .string()
  .regex(/^[imsuv]*$/, 'may only contain the flags i, m, s, u, v')
  .refine((flags) => new Set(flags).size === flags.length, 'repeats a flag')
  .refine((flags) => !(flags.includes('u') && flags.includes('v')), 'cannot combine u and v');

const regexParameters = z
  .strictObject({
    pattern: z.string().min(1),
    flags: regexFlagsSchema.default(''),
    mustMatch: z.boolean().default(true),
  })
  .superRefine(refinePatternCompiles);
type RegexParameters = z.infer<typeof regexParameters>;

const regexCheck: CheckDefinition<RegexParameters> = {
  type: 'regex',
  description: 'The response matches (or, with mustMatch false, does not match) a JavaScript regular expression.',
  family: 'general',
  parameters: regexParameters,
  describe: ({ pattern, flags, mustMatch }) =>
    `The response ${mustMatch ? 'matches' : 'does not match'} /${pattern}/${flags}.`,
  evaluate(response, parameters) {
    const match = compiledPattern(parameters).exec(response);
    const passed = (match !== null) === parameters.mustMatch;
    return { passed, detail: match ? `matched "${match[0].slice(0, 60)}" at ${match.index}` : 'no match' };
  },
};

// ---------------------------------------------------------------- contains / excludes

const textListParameters = z.strictObject({
  text: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
  caseSensitive: z.boolean().default(false),
  /** For a list: `all` items must satisfy the check, or at least one (`any`). */
  match: z.enum(['all', 'any']).default('all'),
});
type TextListParameters = z.infer<typeof textListParameters>;

const normalizedTexts = perParameters((parameters: TextListParameters) => {
  const texts = Array.isArray(parameters.text) ? parameters.text : [parameters.text];
  return { texts, needles: parameters.caseSensitive ? texts : texts.map((text) => text.toLowerCase()) };
});

function foundTexts(response: string, parameters: TextListParameters): { found: string[]; missing: string[] } {
  const { texts, needles } = normalizedTexts(parameters);
  const haystack = parameters.caseSensitive ? response : textFacts(response).lower;
  const found: string[] = [];
  const missing: string[] = [];
  needles.forEach((needle, index) => (haystack.includes(needle) ? found : missing).push(texts[index]));
  return { found, missing };
}

const containsCheck: CheckDefinition<TextListParameters> = {
  type: 'contains',
  description: 'The response contains the text (or all / any of a list); case-insensitive unless caseSensitive.',
  family: 'general',
  parameters: textListParameters,
  describe: (parameters) => {
    const { texts } = normalizedTexts(parameters);
    return texts.length === 1
      ? `The response contains "${texts[0]}".`
      : `The response contains ${parameters.match === 'all' ? 'all' : 'at least one'} of ${quoteList(texts)}.`;
  },
  evaluate(response, parameters) {
    const { found, missing } = foundTexts(response, parameters);
    const passed = parameters.match === 'all' ? missing.length === 0 : found.length > 0;
    return { passed, detail: missing.length === 0 ? 'all present' : `missing: ${quoteList(missing)}` };
  },
};

const excludesCheck: CheckDefinition<TextListParameters> = {
  type: 'excludes',
  description: 'The response does not contain the text (or all / any of a list is absent); case-insensitive unless caseSensitive.',
  family: 'general',
  parameters: textListParameters,
  describe: (parameters) => {
    const { texts } = normalizedTexts(parameters);
    return texts.length === 1
      ? `The response does not contain "${texts[0]}".`
      : parameters.match === 'all'
        ? `The response contains none of ${quoteList(texts)}.`
        : `The response leaves out at least one of ${quoteList(texts)}.`;
  },
  evaluate(response, parameters) {
    const { found, missing } = foundTexts(response, parameters);
    const passed = parameters.match === 'all' ? found.length === 0 : missing.length > 0;
    return { passed, detail: found.length === 0 ? 'none present' : `contains: ${quoteList(found)}` };
  },
};

// ---------------------------------------------------------------- count

const countUnits = ['words', 'sentences', 'paragraphs', 'characters', 'lines'] as const;
type CountUnit = (typeof countUnits)[number];

const countParameters = z.strictObject({
  unit: z.enum(countUnits),
  relation: z.enum(['at_least', 'at_most', 'exactly']),
  value: z.number().int().min(0),
});
type CountParameters = z.infer<typeof countParameters>;

const blankLineSeparator = /\n[^\S\n]*\n\s*/;

/** Counts `unit` in `text`: words and sentences as IFEval counts them, paragraphs between blank lines. */
export function countUnit(text: string, unit: CountUnit): number {
  switch (unit) {
    case 'words':
      return textFacts(text).wordCount;
    case 'sentences':
      return textFacts(text).sentenceCount;
    case 'paragraphs':
      return text.split(blankLineSeparator).filter((paragraph) => pythonStrip(paragraph).length > 0).length;
    case 'characters':
      return [...text].length;
    case 'lines':
      return text.split(/\r?\n/).filter((line) => pythonStrip(line).length > 0).length;
  }
}

const countCheck: CheckDefinition<CountParameters> = {
  type: 'count',
  description:
    'The number of words, sentences, paragraphs (blank-line separated), characters or non-blank lines is at least / at most / exactly a value.',
  family: 'general',
  parameters: countParameters,
  describe: ({ unit, relation, value }) => `The response has ${relation.replace('_', ' ')} ${value} ${unit}.`,
  evaluate(response, parameters) {
    const actual = countUnit(response, parameters.unit);
    const passed =
      parameters.relation === 'at_least'
        ? actual >= parameters.value
        : parameters.relation === 'at_most'
          ? actual <= parameters.value
          : actual === parameters.value;
    return { passed, detail: `${actual} ${parameters.unit}` };
  },
};

// ---------------------------------------------------------------- starts_with / ends_with

const affixParameters = z.strictObject({ text: z.string().min(1), caseSensitive: z.boolean().default(false) });
type AffixParameters = z.infer<typeof affixParameters>;

function affixCompare(response: string, parameters: AffixParameters): { subject: string; affix: string } {
  const subject = pythonStrip(response);
  const affix = pythonStrip(parameters.text);
  return parameters.caseSensitive ? { subject, affix } : { subject: subject.toLowerCase(), affix: affix.toLowerCase() };
}

const startsWithCheck: CheckDefinition<AffixParameters> = {
  type: 'starts_with',
  description: 'The response, ignoring surrounding whitespace, starts with the text.',
  family: 'general',
  parameters: affixParameters,
  describe: ({ text }) => `The response starts with "${text.trim()}".`,
  evaluate(response, parameters) {
    const { subject, affix } = affixCompare(response, parameters);
    const passed = subject.startsWith(affix);
    return { passed, detail: passed ? 'starts with the text' : `starts with "${pythonStrip(response).slice(0, 40)}"` };
  },
};

const endsWithCheck: CheckDefinition<AffixParameters> = {
  type: 'ends_with',
  description: 'The response, ignoring surrounding whitespace, ends with the text.',
  family: 'general',
  parameters: affixParameters,
  describe: ({ text }) => `The response ends with "${text.trim()}".`,
  evaluate(response, parameters) {
    const { subject, affix } = affixCompare(response, parameters);
    const passed = subject.endsWith(affix);
    return { passed, detail: passed ? 'ends with the text' : `ends with "${pythonStrip(response).slice(-40)}"` };
  },
};

// ---------------------------------------------------------------- json

// ajv is loaded on the first JSON-Schema check only: most runs never need it.
let ajv: AjvInstance | undefined;
function schemaCompiler(): AjvInstance {
  if (!ajv) {
    const { Ajv } = createRequire(import.meta.url)('ajv') as { Ajv: new (options: object) => AjvInstance };
    ajv = new Ajv({ allErrors: false, strict: false });
  }
  return ajv;
}
/** Validators by canonical schema text: one compilation per distinct schema. */
const schemaValidators = new Map<string, ValidateFunction>();

function schemaValidator(schema: Record<string, unknown>): ValidateFunction {
  const key = canonicalJson(schema);
  let validate = schemaValidators.get(key);
  if (!validate) {
    validate = schemaCompiler().compile(schema);
    schemaValidators.set(key, validate);
  }
  return validate;
}

const jsonParameters = z
  .strictObject({
    schema: z.record(z.string(), z.unknown()).optional(),
    /** Accept the JSON inside a ``` or ```json fence. */
    allowFence: z.boolean().default(true),
  })
  .superRefine((parameters, context) => {
    if (parameters.schema === undefined) return;
    try {
      schemaValidator(parameters.schema);
    } catch (error) {
      context.addIssue({
        code: 'custom',
        path: ['schema'],
        message: `is not a valid JSON Schema (${error instanceof Error ? error.message : String(error)})`,
      });
    }
  });
type JsonParameters = z.infer<typeof jsonParameters>;

const fencePattern = /^```[A-Za-z0-9_-]*[^\S\n]*\n([\s\S]*?)\n?```$/;

/** The JSON text of a response: the whole response, or the body of its only code fence. */
export function jsonBody(response: string, allowFence: boolean): string {
  const trimmed = pythonStrip(response);
  if (!allowFence) return trimmed;
  const fenced = fencePattern.exec(trimmed);
  return fenced ? fenced[1] : trimmed;
}

const jsonCheck: CheckDefinition<JsonParameters> = {
  type: 'json',
  description: 'The response is valid JSON (optionally inside a ```json fence), optionally matching a JSON Schema.',
  family: 'general',
  parameters: jsonParameters,
  describe: ({ schema }) => (schema ? 'The response is JSON that follows the given schema.' : 'The response is valid JSON.'),
  evaluate(response, parameters) {
    const parsed = safeParseJson(jsonBody(response, parameters.allowFence));
    if (!parsed.ok) return { passed: false, detail: `not valid JSON: ${parsed.error}` };
    if (!parameters.schema) return { passed: true, detail: 'valid JSON' };
    const validate = schemaValidator(parameters.schema);
    if (validate(parsed.value)) return { passed: true, detail: 'valid JSON matching the schema' };
    const issue = validate.errors?.[0];
    return { passed: false, detail: `schema: ${issue ? `${issue.instancePath || '/'} ${issue.message ?? 'is invalid'}` : 'invalid'}` };
  },
};

// ---------------------------------------------------------------- language

const languageParameters = z.strictObject({
  language: z
    .string()
    .refine((code) => code === 'zh' || langdetectLanguages.has(code), { message: 'must be an ISO 639-1 code the detector knows' }),
});
type LanguageParameters = z.infer<typeof languageParameters>;

const languageCheck: CheckDefinition<LanguageParameters> = {
  type: 'language',
  description: 'The response is in the given language (ISO 639-1; zh matches zh-cn and zh-tw), detected as langdetect does.',
  family: 'general',
  parameters: languageParameters,
  describe: ({ language }) => `The response is written in language "${language}".`,
  evaluate(response, parameters) {
    const detected = textFacts(response).language;
    if (detected === null) return { passed: false, detail: 'no language detectable' };
    const passed = detected === parameters.language || (parameters.language === 'zh' && detected.startsWith('zh-'));
    return { passed, detail: `detected language: ${detected}` };
  },
};

export const generalChecks: ReadonlyArray<CheckDefinition> = [
  regexCheck,
  containsCheck,
  excludesCheck,
  countCheck,
  startsWithCheck,
  endsWithCheck,
  jsonCheck,
  languageCheck,
];
