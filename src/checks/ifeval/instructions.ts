/**
 * IFEval's 25 verifiable instructions as checks. Each `type` is IFEval's instruction id
 * and the parameters are its kwargs, with the same names and value conventions. The
 * verdicts follow Google's `instruction_following_eval` checker (strict and loose); the
 * comments note where its behaviour is surprising but deliberate.
 */
import { z, type ZodType } from 'zod';
import { safeParseJson } from '../../util/json.js';
import { looseVariants, textFacts, type TextFacts } from '../text-facts.js';
import {
  PYTHON_DIGIT_CLASS,
  PYTHON_WHITESPACE_CLASS,
  PYTHON_WORD_CLASS,
  compilePythonPattern,
  countMatches,
  pythonLeftStrip,
  pythonRightStrip,
  pythonSplitWhitespace,
  pythonStrip,
} from '../text/python-text.js';
import type { CheckContext, CheckDefinition, CheckOutcome } from '../types.js';
import { ifevalLanguageNames, langdetectLanguages } from './languages.js';
import { perParameters } from '../per-parameters.js';

const relationSchema = z.enum(['less than', 'at least']);
type Relation = z.infer<typeof relationSchema>;
const countSchema = z.number().int().min(0);
const positiveSchema = z.number().int().min(1);
const textSchema = z.string().trim().min(1);

function compare(actual: number, relation: Relation, threshold: number): boolean {
  return relation === 'less than' ? actual < threshold : actual >= threshold;
}

function relationText(relation: Relation): string {
  return relation === 'less than' ? 'fewer than' : 'at least';
}

const VARIANT_NAMES = [
  'as written',
  'without *',
  'without its first line',
  'without its last line',
  'without its first and last lines',
  'without its first line and *',
  'without its last line and *',
  'without its first and last lines and *',
];

interface InstructionSpec<Parameters> {
  id: string;
  description: string;
  parameters: ZodType<Parameters>;
  describe(parameters: Parameters): string;
  follows(facts: TextFacts, parameters: Parameters, context: CheckContext): boolean;
  /** What was measured, for the criterion's explanation. */
  explain(facts: TextFacts, parameters: Parameters, context: CheckContext): string;
}

/**
 * Wraps an instruction's test in IFEval's evaluation rules: an empty (all-whitespace)
 * response never follows an instruction, and loose mode passes if any of the eight
 * response variants does.
 */
function defineInstruction<Parameters>(spec: InstructionSpec<Parameters>): CheckDefinition<Parameters> {
  return {
    type: spec.id,
    description: spec.description,
    family: 'ifeval',
    parameters: spec.parameters,
    describe: spec.describe,
    evaluate(response: string, parameters: Parameters, context: CheckContext): CheckOutcome {
      if (context.mode === 'loose') {
        const variants = looseVariants(response);
        for (let index = 0; index < variants.length; index += 1) {
          const variant = variants[index];
          if (variant !== null && variant.stripped.length > 0 && spec.follows(variant, parameters, context)) {
            const detail = spec.explain(variant, parameters, context);
            return { passed: true, detail: index === 0 ? detail : `${detail} (loose: response ${VARIANT_NAMES[index]})` };
          }
        }
        return { passed: false, detail: failureDetail(textFacts(response), parameters, context, spec) };
      }
      const facts = textFacts(response);
      const passed = facts.stripped.length > 0 && spec.follows(facts, parameters, context);
      return { passed, detail: passed ? spec.explain(facts, parameters, context) : failureDetail(facts, parameters, context, spec) };
    },
  };
}

function failureDetail<Parameters>(
  facts: TextFacts,
  parameters: Parameters,
  context: CheckContext,
  spec: InstructionSpec<Parameters>,
): string {
  return facts.stripped.length === 0 ? 'the response is empty' : spec.explain(facts, parameters, context);
}

const PY_WS = PYTHON_WHITESPACE_CLASS;

// ---------------------------------------------------------------- keywords

const existence = defineInstruction({
  id: 'keywords:existence',
  description: 'Every keyword appears (case-insensitive; keywords are regular expressions, as in IFEval).',
  parameters: z.strictObject({ keywords: z.array(textSchema).min(1) }),
  describe: ({ keywords }) => `Include the keywords ${keywords.map((keyword) => `"${keyword}"`).join(', ')}.`,
  follows: (facts, parameters) => existencePatterns(parameters).every(({ pattern }) => pattern.test(facts.text)),
  explain: (facts, parameters) => {
    const missing = existencePatterns(parameters).filter(({ pattern }) => !pattern.test(facts.text));
    return missing.length === 0 ? 'all keywords present' : `missing: ${missing.map(({ keyword }) => keyword).join(', ')}`;
  },
});
const existencePatterns = perParameters((parameters: { keywords: string[] }) =>
  [...parameters.keywords].sort().map((keyword) => ({ keyword, pattern: compilePythonPattern(keyword, 'i') })),
);

const frequency = defineInstruction({
  id: 'keywords:frequency',
  description: 'A keyword occurs fewer than / at least N times (case-insensitive, substring matches count).',
  parameters: z.strictObject({ keyword: textSchema, frequency: countSchema, relation: relationSchema }),
  describe: ({ keyword, frequency: times, relation }) =>
    `The word "${keyword}" should appear ${relationText(relation)} ${times} times.`,
  follows: (facts, parameters) =>
    compare(countMatches(frequencyPattern(parameters), facts.text), parameters.relation, parameters.frequency),
  explain: (facts, parameters) => `"${parameters.keyword}" occurs ${countMatches(frequencyPattern(parameters), facts.text)} times`,
});
const frequencyPattern = perParameters((parameters: { keyword: string }) => compilePythonPattern(parameters.keyword, 'gi'));

const forbiddenWords = defineInstruction({
  id: 'keywords:forbidden_words',
  description: 'None of the forbidden words appears as a whole word (case-insensitive).',
  parameters: z.strictObject({ forbidden_words: z.array(textSchema).min(1) }),
  describe: ({ forbidden_words: words }) => `Do not include the words ${words.map((word) => `"${word}"`).join(', ')}.`,
  follows: (facts, parameters) => !forbiddenPatterns(parameters).some(({ pattern }) => pattern.test(facts.text)),
  explain: (facts, parameters) => {
    const found = forbiddenPatterns(parameters).filter(({ pattern }) => pattern.test(facts.text));
    return found.length === 0 ? 'no forbidden word used' : `uses: ${found.map(({ word }) => word).join(', ')}`;
  },
});
const forbiddenPatterns = perParameters((parameters: { forbidden_words: string[] }) =>
  [...new Set(parameters.forbidden_words)].sort().map((word) => ({
    word,
    // `\b…\b` with Python's Unicode word boundary.
    pattern: compilePythonPattern(`(?<![${PYTHON_WORD_CLASS}])(?:${word})(?![${PYTHON_WORD_CLASS}])`, 'i'),
  })),
);

const letterFrequency = defineInstruction({
  id: 'keywords:letter_frequency',
  description: 'A letter occurs fewer than / at least N times (case-insensitive).',
  parameters: z.strictObject({
    letter: z.string().trim().length(1, 'must be a single letter'),
    let_frequency: countSchema,
    let_relation: relationSchema,
  }),
  describe: ({ letter, let_frequency: times, let_relation: relation }) =>
    `The letter "${letter.toLowerCase()}" should appear ${relationText(relation)} ${times} times.`,
  follows: (facts, parameters) =>
    compare(letterCount(facts, parameters.letter), parameters.let_relation, parameters.let_frequency),
  explain: (facts, parameters) => `"${parameters.letter.toLowerCase()}" occurs ${letterCount(facts, parameters.letter)} times`,
});

function letterCount(facts: TextFacts, letter: string): number {
  return facts.countInLower(pythonStrip(letter).toLowerCase());
}

// ---------------------------------------------------------------- language

const responseLanguage = defineInstruction({
  id: 'language:response_language',
  description: "The whole response is in the given language, as langdetect judges it (undetectable text passes, as in IFEval).",
  parameters: z.strictObject({
    language: z.string().refine((code) => langdetectLanguages.has(code), { message: 'must be a langdetect language code' }),
  }),
  describe: ({ language }) =>
    `Your entire response should be in ${ifevalLanguageNames[language] ?? language} language, no other language is allowed.`,
  follows: (facts, parameters) => facts.language === null || facts.language === parameters.language,
  explain: (facts) => (facts.language === null ? 'no language detectable (counted as followed)' : `detected language: ${facts.language}`),
});

// ---------------------------------------------------------------- length constraints

const numberSentences = defineInstruction({
  id: 'length_constraints:number_sentences',
  description: "Sentence count (NLTK's English Punkt model) is fewer than / at least N.",
  parameters: z.strictObject({ num_sentences: countSchema, relation: relationSchema }),
  describe: ({ num_sentences: count, relation }) => `Your response should contain ${relationText(relation)} ${count} sentences.`,
  follows: (facts, parameters) => compare(facts.sentenceCount, parameters.relation, parameters.num_sentences),
  explain: (facts) => `${facts.sentenceCount} sentences`,
});

const numberParagraphs = defineInstruction({
  id: 'length_constraints:number_paragraphs',
  description: 'Exactly N paragraphs separated by the markdown divider ***; an empty paragraph between dividers fails.',
  parameters: z.strictObject({ num_paragraphs: positiveSchema }),
  describe: ({ num_paragraphs: count }) =>
    `There should be ${count} paragraphs, separated with the markdown divider: ***.`,
  follows: (facts, parameters) => dividerParagraphCount(facts.text) === parameters.num_paragraphs,
  explain: (facts) => {
    const count = dividerParagraphCount(facts.text);
    return count === null ? 'an empty paragraph between dividers' : `${count} paragraphs`;
  },
});
const paragraphDivider = new RegExp(`[${PY_WS}]?\\*\\*\\*[${PY_WS}]?`, 'u');

/** Paragraph count for `***` dividers; `null` when an inner paragraph is empty (IFEval fails those). */
function dividerParagraphCount(text: string): number | null {
  const paragraphs = text.split(paragraphDivider);
  let count = paragraphs.length;
  for (let index = 0; index < paragraphs.length; index += 1) {
    if (pythonStrip(paragraphs[index]).length > 0) continue;
    if (index === 0 || index === paragraphs.length - 1) count -= 1;
    else return null;
  }
  return count;
}

const numberWords = defineInstruction({
  id: 'length_constraints:number_words',
  description: 'Word count (runs of letters, digits and _) is fewer than / at least N.',
  parameters: z.strictObject({ num_words: countSchema, relation: relationSchema }),
  describe: ({ num_words: count, relation }) => `Answer with ${relationText(relation)} ${count} words.`,
  follows: (facts, parameters) => compare(facts.wordCount, parameters.relation, parameters.num_words),
  explain: (facts) => `${facts.wordCount} words`,
});

const nthParagraphFirstWord = defineInstruction({
  id: 'length_constraints:nth_paragraph_first_word',
  description: 'Exactly N paragraphs separated by blank lines, and paragraph i starts with the given word.',
  parameters: z
    .strictObject({ num_paragraphs: positiveSchema, nth_paragraph: positiveSchema, first_word: textSchema })
    .refine((parameters) => parameters.nth_paragraph <= parameters.num_paragraphs, {
      message: 'must not exceed num_paragraphs',
      path: ['nth_paragraph'],
    }),
  describe: ({ num_paragraphs: count, nth_paragraph: nth, first_word: word }) =>
    `There should be ${count} paragraphs separated by two new lines; paragraph ${nth} must start with the word "${word}".`,
  follows: (facts, parameters) => {
    const found = nthParagraph(facts.text, parameters.nth_paragraph);
    return found.count === parameters.num_paragraphs && found.firstWord === parameters.first_word.toLowerCase();
  },
  explain: (facts, parameters) => {
    const found = nthParagraph(facts.text, parameters.nth_paragraph);
    return `${found.count} paragraphs; paragraph ${parameters.nth_paragraph} starts with ${found.firstWord === null ? 'nothing' : `"${found.firstWord}"`}`;
  },
});
const FIRST_WORD_STOP = new Set(['.', ',', '?', '!', "'", '"']);

function nthParagraph(text: string, nth: number): { count: number; firstWord: string | null } {
  const paragraphs = text.split('\n\n');
  let count = paragraphs.length;
  for (const paragraph of paragraphs) if (pythonStrip(paragraph).length === 0) count -= 1;
  // IFEval indexes the raw split (empty pieces included) but compares against the
  // count without them; we keep both quirks.
  if (nth > count) return { count, firstWord: null };
  const paragraph = pythonStrip(paragraphs[nth - 1]);
  if (paragraph.length === 0) return { count, firstWord: null };
  const word = pythonLeftStrip(pythonLeftStrip(pythonStrip(pythonSplitWhitespace(paragraph)[0]), "'"), '"');
  let firstWord = '';
  for (const character of word) {
    if (FIRST_WORD_STOP.has(character)) break;
    firstWord += character.toLowerCase();
  }
  return { count, firstWord };
}

// ---------------------------------------------------------------- detectable content

const numberPlaceholders = defineInstruction({
  id: 'detectable_content:number_placeholders',
  description: 'At least N placeholders in square brackets, such as [address].',
  parameters: z.strictObject({ num_placeholders: countSchema }),
  describe: ({ num_placeholders: count }) =>
    `The response must contain at least ${count} placeholders represented by square brackets, such as [address].`,
  follows: (facts, parameters) => countMatches(placeholderPattern, facts.text) >= parameters.num_placeholders,
  explain: (facts) => `${countMatches(placeholderPattern, facts.text)} placeholders`,
});
const placeholderPattern = /\[[^\n]*?\]/g;

const postscript = defineInstruction({
  id: 'detectable_content:postscript',
  description: 'A line contains a postscript starting with the marker (P.S. and P.P.S are matched loosely).',
  parameters: z.strictObject({ postscript_marker: textSchema }),
  describe: ({ postscript_marker: marker }) => `At the end of your response, explicitly add a postscript starting with ${marker}.`,
  follows: (facts, parameters) => postscriptPattern(parameters).test(facts.lower),
  explain: (facts, parameters) =>
    postscriptPattern(parameters).test(facts.lower) ? `postscript ${parameters.postscript_marker} found` : `no ${parameters.postscript_marker} postscript`,
});
const postscriptPattern = perParameters((parameters: { postscript_marker: string }) => {
  const marker = parameters.postscript_marker;
  // Python's `re.MULTILINE` `.*$`: `.` stops at \n only, `$` is an end of line.
  const tail = `[^\\n]*(?=\\n|$)`;
  if (marker === 'P.P.S') return new RegExp(`[${PY_WS}]*p\\.[${PY_WS}]?p\\.[${PY_WS}]?s${tail}`, 'u');
  if (marker === 'P.S.') return new RegExp(`[${PY_WS}]*p\\.[${PY_WS}]?s\\.${tail}`, 'u');
  return compilePythonPattern(`[${PY_WS}]*${marker.toLowerCase()}${tail}`, '');
});

// ---------------------------------------------------------------- detectable format

const numberBulletLists = defineInstruction({
  id: 'detectable_format:number_bullet_lists',
  description: 'Exactly N markdown bullet points (lines starting with * or -).',
  parameters: z.strictObject({ num_bullets: countSchema }),
  describe: ({ num_bullets: count }) => `Your answer must contain exactly ${count} bullet points in markdown.`,
  follows: (facts, parameters) => bulletCount(facts.text) === parameters.num_bullets,
  explain: (facts) => `${bulletCount(facts.text)} bullet points`,
});
// `^\s*\*[^\*].*$` and `^\s*-.*$` under re.MULTILINE; `\s*` may cross blank lines, as in IFEval.
const starBulletPattern = new RegExp(`(?<=^|\\n)[${PY_WS}]*\\*[^*][^\\n]*(?=\\n|$)`, 'gu');
const dashBulletPattern = new RegExp(`(?<=^|\\n)[${PY_WS}]*-[^\\n]*(?=\\n|$)`, 'gu');

function bulletCount(text: string): number {
  return countMatches(starBulletPattern, text) + countMatches(dashBulletPattern, text);
}

const CONSTRAINED_OPTIONS = ['My answer is yes.', 'My answer is no.', 'My answer is maybe.'];
const constrainedResponse = defineInstruction({
  id: 'detectable_format:constrained_response',
  description: 'Contains one of "My answer is yes.", "My answer is no.", "My answer is maybe.".',
  parameters: z.strictObject({}),
  describe: () => `Answer with one of the following options: ${CONSTRAINED_OPTIONS.map((option) => `"${option}"`).join(', ')}.`,
  follows: (facts) => CONSTRAINED_OPTIONS.some((option) => facts.stripped.includes(option)),
  explain: (facts) => {
    const option = CONSTRAINED_OPTIONS.find((candidate) => facts.stripped.includes(candidate));
    return option ? `contains "${option}"` : 'none of the options found';
  },
});

const numberHighlightedSections = defineInstruction({
  id: 'detectable_format:number_highlighted_sections',
  description: 'At least N non-empty markdown highlights (*text* or **text**) within a line.',
  parameters: z.strictObject({ num_highlights: countSchema }),
  describe: ({ num_highlights: count }) => `Highlight at least ${count} sections in your answer with markdown, i.e. *highlighted section*.`,
  follows: (facts, parameters) => highlightCount(facts.text) >= parameters.num_highlights,
  explain: (facts) => `${highlightCount(facts.text)} highlighted sections`,
});
const singleHighlightPattern = /\*[^\n*]*\*/g;
const doubleHighlightPattern = /\*\*[^\n*]*\*\*/g;

function highlightCount(text: string): number {
  let count = 0;
  for (const match of text.matchAll(singleHighlightPattern)) {
    if (pythonStrip(pythonStrip(match[0], '*')).length > 0) count += 1;
  }
  for (const match of text.matchAll(doubleHighlightPattern)) {
    if (pythonStrip(match[0].slice(2, -2)).length > 0) count += 1;
  }
  return count;
}

const multipleSections = defineInstruction({
  id: 'detectable_format:multiple_sections',
  description: 'At least N sections, each starting with the splitter word and a number (e.g. SECTION 1).',
  parameters: z.strictObject({ section_spliter: textSchema, num_sections: countSchema }),
  describe: ({ section_spliter: splitter, num_sections: count }) =>
    `Your response must have ${count} sections; mark the beginning of each section with ${splitter} X.`,
  follows: (facts, parameters) => countMatches(sectionPattern(parameters), facts.text) >= parameters.num_sections,
  explain: (facts, parameters) => `${countMatches(sectionPattern(parameters), facts.text)} sections`,
});
const sectionPattern = perParameters((parameters: { section_spliter: string }) =>
  compilePythonPattern(`[${PY_WS}]?${parameters.section_spliter}[${PY_WS}]?[${PYTHON_DIGIT_CLASS}]+[${PY_WS}]?`, 'g'),
);

const jsonFormat = defineInstruction({
  id: 'detectable_format:json_format',
  description: 'The whole response is JSON, optionally inside a ``` or ```json fence.',
  parameters: z.strictObject({}),
  describe: () => 'Entire output should be wrapped in JSON format (markdown ticks such as ``` are allowed).',
  follows: (facts) => isPythonJson(unfenceJson(facts.stripped)),
  explain: (facts) => (isPythonJson(unfenceJson(facts.stripped)) ? 'valid JSON' : 'not valid JSON'),
});

function unfenceJson(stripped: string): string {
  let text = stripped;
  for (const prefix of ['```json', '```Json', '```JSON', '```']) if (text.startsWith(prefix)) text = text.slice(prefix.length);
  if (text.endsWith('```')) text = text.slice(0, -3);
  return pythonStrip(text);
}

/** Python's `json.loads` also accepts the literals NaN, Infinity and -Infinity. */
export function isPythonJson(text: string): boolean {
  if (safeParseJson(text).ok) return true;
  if (!/NaN|Infinity/.test(text)) return false;
  return safeParseJson(replaceNonFiniteLiterals(text)).ok;
}

function replaceNonFiniteLiterals(text: string): string {
  // Replace the literals only outside strings, so "NaN" inside a string is left alone.
  let result = '';
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index];
    if (inString) {
      result += character;
      if (character === '\\') {
        result += text[index + 1] ?? '';
        index += 1;
      } else if (character === '"') inString = false;
      continue;
    }
    if (character === '"') {
      inString = true;
      result += character;
    } else if (text.startsWith('NaN', index)) {
      result += '0';
      index += 2;
    } else if (text.startsWith('Infinity', index)) {
      result += '0';
      index += 7;
    } else result += character;
  }
  return result;
}

const title = defineInstruction({
  id: 'detectable_format:title',
  description: 'Contains a non-empty title in double angular brackets, such as <<poem of joy>>.',
  parameters: z.strictObject({}),
  describe: () => 'Your answer must contain a title, wrapped in double angular brackets, such as <<poem of joy>>.',
  follows: (facts) => hasTitle(facts.text),
  explain: (facts) => (hasTitle(facts.text) ? 'title found' : 'no <<title>>'),
});
const titlePattern = /<<[^\n]+>>/g;

function hasTitle(text: string): boolean {
  for (const match of text.matchAll(titlePattern)) {
    if (pythonStrip(pythonRightStrip(pythonLeftStrip(match[0], '<'), '>')).length > 0) return true;
  }
  return false;
}

// ---------------------------------------------------------------- combination

const twoResponses = defineInstruction({
  id: 'combination:two_responses',
  description: 'Exactly two different non-empty responses separated by ******.',
  parameters: z.strictObject({}),
  describe: () => 'Give two different responses, separated by 6 asterisk symbols: ******.',
  follows: (facts) => twoResponsesFollowed(facts.text),
  explain: (facts) => `${facts.text.split('******').filter((part) => pythonStrip(part).length > 0).length} responses separated by ******`,
});

function twoResponsesFollowed(text: string): boolean {
  const valid: string[] = [];
  const parts = text.split('******');
  for (let index = 0; index < parts.length; index += 1) {
    if (pythonStrip(parts[index]).length > 0) valid.push(parts[index]);
    else if (index !== 0 && index !== parts.length - 1) return false;
  }
  return valid.length === 2 && pythonStrip(valid[0]) !== pythonStrip(valid[1]);
}

const repeatPrompt = defineInstruction({
  id: 'combination:repeat_prompt',
  description: 'The response starts by repeating the request word for word (case-insensitive).',
  parameters: z.strictObject({ prompt_to_repeat: z.string().optional() }),
  describe: ({ prompt_to_repeat: prompt }) =>
    prompt === undefined
      ? 'First repeat the request word for word without change, then give your answer.'
      : `First repeat the request "${oneLine(prompt)}" word for word, then give your answer.`,
  follows: (facts, parameters, context) => {
    const prompt = pythonStrip(parameters.prompt_to_repeat ?? context.prompt).toLowerCase();
    return prompt.length > 0 && pythonStrip(facts.text).toLowerCase().startsWith(prompt);
  },
  explain: (facts, parameters, context) => {
    const prompt = pythonStrip(parameters.prompt_to_repeat ?? context.prompt).toLowerCase();
    if (prompt.length === 0) return 'no prompt to repeat';
    return facts.stripped.toLowerCase().startsWith(prompt) ? 'starts with the request' : 'does not start with the request';
  },
});

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 80 ? `${flat.slice(0, 77)}...` : flat;
}

// ---------------------------------------------------------------- start / end

const endChecker = defineInstruction({
  id: 'startend:end_checker',
  description: 'The response ends with the exact phrase (case-insensitive, surrounding whitespace and quotes ignored).',
  parameters: z.strictObject({ end_phrase: textSchema }),
  describe: ({ end_phrase: phrase }) => `Finish your response with this exact phrase: "${phrase}". No other words should follow it.`,
  follows: (facts, parameters) => endsWithPhrase(facts, parameters.end_phrase),
  explain: (facts, parameters) => (endsWithPhrase(facts, parameters.end_phrase) ? 'ends with the phrase' : 'does not end with the phrase'),
});

function endsWithPhrase(facts: TextFacts, phrase: string): boolean {
  return pythonStrip(facts.stripped, '"').toLowerCase().endsWith(pythonStrip(phrase).toLowerCase());
}

const quotation = defineInstruction({
  id: 'startend:quotation',
  description: 'The whole response is wrapped in double quotation marks.',
  parameters: z.strictObject({}),
  describe: () => 'Wrap your entire response with double quotation marks.',
  follows: (facts) => isQuoted(facts.stripped),
  explain: (facts) => (isQuoted(facts.stripped) ? 'wrapped in double quotes' : 'not wrapped in double quotes'),
});

function isQuoted(stripped: string): boolean {
  return stripped.length > 1 && stripped.startsWith('"') && stripped.endsWith('"');
}

// ---------------------------------------------------------------- change case

const capitalWordFrequency = defineInstruction({
  id: 'change_case:capital_word_frequency',
  description: "Words in all capitals (NLTK word tokens) number fewer than / at least N; DON'T counts as DO + N'T.",
  parameters: z.strictObject({ capital_frequency: countSchema, capital_relation: relationSchema }),
  describe: ({ capital_frequency: count, capital_relation: relation }) =>
    `Words with all capital letters should appear ${relationText(relation)} ${count} times.`,
  follows: (facts, parameters) => compare(facts.capitalWordCount, parameters.capital_relation, parameters.capital_frequency),
  explain: (facts) => `${facts.capitalWordCount} all-capital words`,
});

const englishCapital = defineInstruction({
  id: 'change_case:english_capital',
  description: 'The response is in English and in capital letters only.',
  parameters: z.strictObject({}),
  describe: () => 'Your entire response should be in English, and in all capital letters.',
  // Undetectable text counts as English, as in IFEval.
  follows: (facts) => facts.isUpper && (facts.language === null || facts.language === 'en'),
  explain: (facts) => (facts.isUpper ? `all capitals; detected language: ${facts.language ?? 'none'}` : 'contains lowercase letters'),
});

const englishLowercase = defineInstruction({
  id: 'change_case:english_lowercase',
  description: 'The response is in English and in lowercase letters only.',
  parameters: z.strictObject({}),
  describe: () => 'Your entire response should be in English, and in all lowercase letters.',
  follows: (facts) => facts.isLower && (facts.language === null || facts.language === 'en'),
  explain: (facts) => (facts.isLower ? `all lowercase; detected language: ${facts.language ?? 'none'}` : 'contains capital letters'),
});

// ---------------------------------------------------------------- punctuation

const noComma = defineInstruction({
  id: 'punctuation:no_comma',
  description: 'The response contains no comma.',
  parameters: z.strictObject({}),
  describe: () => 'In your entire response, refrain from the use of any commas.',
  follows: (facts) => !facts.text.includes(','),
  explain: (facts) => (facts.text.includes(',') ? 'contains a comma' : 'no comma'),
});

export const ifevalInstructions: ReadonlyArray<CheckDefinition> = [
  existence,
  frequency,
  forbiddenWords,
  letterFrequency,
  responseLanguage,
  numberSentences,
  numberParagraphs,
  numberWords,
  nthParagraphFirstWord,
  numberPlaceholders,
  postscript,
  numberBulletLists,
  constrainedResponse,
  numberHighlightedSections,
  multipleSections,
  jsonFormat,
  title,
  twoResponses,
  repeatPrompt,
  endChecker,
  capitalWordFrequency,
  englishCapital,
  englishLowercase,
  noComma,
  quotation,
];
