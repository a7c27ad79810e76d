/**
 * Punkt sentence boundary detection (Kiss & Strunk 2006) as NLTK applies it with its
 * English model: candidate breaks at `.`, `?` and `!`, decided from the surrounding
 * tokens by the abbreviation, collocation, initial/ordinal and sentence-starter rules.
 * IFEval's `length_constraints:number_sentences` counts sentences this way, so the
 * rules follow NLTK's tokenizer step for step (token regexes, candidate contexts,
 * boundary realignment), including its quirks.
 */
import { PYTHON_WHITESPACE_CLASS, pythonIsLower, pythonIsUpper, pythonRightStrip } from './python-text.js';
import {
  englishAbbreviationTypes,
  englishCollocations,
  englishCommonLowercaseWords,
  englishSentenceStarters,
} from './punkt-english.js';

export interface PunktParameters {
  abbreviationTypes: ReadonlySet<string>;
  /** `"first second"` pairs. */
  collocations: ReadonlySet<string>;
  sentenceStarters: ReadonlySet<string>;
  /** Orthographic context flags per word type; missing types count as 0. */
  orthographicContext: ReadonlyMap<string, number>;
}

// Orthographic context bits, as in the trained model: where the type was seen with a
// capital or lowercase first letter (sentence start, middle, unknown position).
const ORTHO_MID_UC = 1 << 2;
const ORTHO_MID_LC = 1 << 5;
const ORTHO_UC = (1 << 1) | (1 << 2) | (1 << 3);
const ORTHO_BEG_LC = 1 << 4;
const ORTHO_LC = (1 << 4) | (1 << 5) | (1 << 6);

const WS = PYTHON_WHITESPACE_CLASS;
const NON_WORD = `[)";}\\]*:@'({\\[!?]`;
const MULTI_CHAR = `(?:-{2,}|\\.{2,}|(?:\\.[${WS}]){2,}\\.)`;
const WORD_START = `[^("\`{\\[:;&#*@)}\\]\\-,]`;

const wordTokenPattern = new RegExp(
  `${MULTI_CHAR}|(?=${WORD_START})[^${WS}]+?(?=[${WS}]|$|${NON_WORD}|${MULTI_CHAR}|,(?=$|[${WS}]|${NON_WORD}|${MULTI_CHAR}))|[^${WS}]`,
  'gu',
);
const periodContextPattern = new RegExp(`[.?!](?=(?<after>${NON_WORD}|[${WS}]+(?<next>[^${WS}]+)))`, 'gu');
const boundaryRealignmentPattern = new RegExp(`^["')\\]}]+?(?:[${WS}]+|(?=--)|(?=\\n)|$)`, 'u');
const nonWhitespace = new RegExp(`[^${WS}]`, 'u');
const numericPattern = /^-?[.,]?\p{Nd}[\p{Nd},.-]*\.?$/u;
const ellipsisPattern = /^\.\.+$/;
const initialPattern = /^[\p{L}\p{Nl}\p{No}_]\.$/u;
const SENTENCE_END = new Set(['.', '?', '!']);
const PUNCTUATION = new Set([';', ':', ',', '.', '!', '?']);

interface PunktToken {
  text: string;
  type: string;
  periodFinal: boolean;
  sentenceBreak: boolean;
  abbreviation: boolean;
  ellipsis: boolean;
}

function makeToken(text: string): PunktToken {
  const lower = text.toLowerCase();
  return {
    text,
    type: numericPattern.test(lower) ? '##number##' : lower,
    periodFinal: text.endsWith('.'),
    sentenceBreak: false,
    abbreviation: false,
    ellipsis: false,
  };
}

function typeWithoutPeriod(token: PunktToken): string {
  return token.type.length > 1 && token.type.endsWith('.') ? token.type.slice(0, -1) : token.type;
}

function typeWithoutSentencePeriod(token: PunktToken): string {
  return token.sentenceBreak ? typeWithoutPeriod(token) : token.type;
}

function firstCharacter(text: string): string {
  return String.fromCodePoint(text.codePointAt(0) ?? 32);
}

export class PunktSentenceTokenizer {
  constructor(private readonly parameters: PunktParameters) {}

  /** The sentences of `text`, as `tokenize` returns them in NLTK. */
  tokenize(text: string): string[] {
    return this.spans(text).map(([start, end]) => text.slice(start, end));
  }

  count(text: string): number {
    return this.spans(text).length;
  }

  spans(text: string): Array<[number, number]> {
    return this.realignBoundaries(text, this.slicesFromText(text));
  }

  private *potentialEndContexts(text: string): Generator<{ match: RegExpExecArray; context: string }> {
    // NLTK matches only the punctuation, then looks back for the word before it and
    // drops candidates whose look-back overlaps the previous one (its ReDoS-safe form).
    let previousSlice: [number, number] = [0, 0];
    let previousMatch: RegExpExecArray | null = null;
    periodContextPattern.lastIndex = 0;
    for (let match = periodContextPattern.exec(text); match !== null; match = periodContextPattern.exec(text)) {
      // The word before the punctuation starts after the last ASCII whitespace since the
      // previous candidate; NLTK treats whitespace right at that boundary as "none found".
      const whitespace = lastAsciiWhitespaceIndex(text, previousSlice[1], match.index);
      const indexAfterLastSpace = whitespace > previousSlice[1] ? whitespace + 1 : previousSlice[0];
      const previousWordSlice: [number, number] = [indexAfterLastSpace, match.index];
      if (previousMatch && previousSlice[1] <= previousWordSlice[0]) {
        yield { match: previousMatch, context: contextOf(text, previousSlice, previousMatch) };
      }
      previousMatch = match;
      previousSlice = previousWordSlice;
    }
    if (previousMatch) yield { match: previousMatch, context: contextOf(text, previousSlice, previousMatch) };
  }

  private slicesFromText(text: string): Array<[number, number]> {
    const slices: Array<[number, number]> = [];
    let lastBreak = 0;
    for (const { match, context } of this.potentialEndContexts(text)) {
      if (!this.containsSentenceBreak(context)) continue;
      const end = match.index + match[0].length;
      slices.push([lastBreak, end]);
      const next = match.groups?.next;
      // The next sentence starts at the following token, or right after the punctuation.
      lastBreak = next ? end + (match.groups?.after ?? '').length - next.length : end;
    }
    slices.push([lastBreak, pythonRightStrip(text).length]);
    return slices;
  }

  private realignBoundaries(text: string, slices: Array<[number, number]>): Array<[number, number]> {
    const boundaries: Array<[number, number]> = [];
    let realign = 0;
    for (let index = 0; index < slices.length; index += 1) {
      const first: [number, number] = [slices[index][0] + realign, slices[index][1]];
      const second = slices[index + 1];
      if (second === undefined) {
        if (first[1] > first[0]) boundaries.push(first);
        continue;
      }
      const match = boundaryRealignmentPattern.exec(text.slice(second[0], second[1]));
      if (match) {
        boundaries.push([first[0], second[0] + pythonRightStrip(match[0]).length]);
        realign = match[0].length;
      } else {
        realign = 0;
        if (first[1] > first[0]) boundaries.push(first);
      }
    }
    return boundaries;
  }

  private containsSentenceBreak(context: string): boolean {
    const tokens = this.annotate(tokenizeWords(context));
    // A break on the last token of the context does not count: nothing follows it.
    for (let index = 0; index < tokens.length - 1; index += 1) if (tokens[index].sentenceBreak) return true;
    return false;
  }

  private annotate(tokens: PunktToken[]): PunktToken[] {
    for (const token of tokens) this.firstPass(token);
    for (let index = 0; index < tokens.length - 1; index += 1) this.secondPass(tokens[index], tokens[index + 1]);
    return tokens;
  }

  private firstPass(token: PunktToken): void {
    const text = token.text;
    if (SENTENCE_END.has(text)) {
      token.sentenceBreak = true;
    } else if (ellipsisPattern.test(text)) {
      token.ellipsis = true;
    } else if (token.periodFinal && !text.endsWith('..')) {
      const stem = text.slice(0, -1).toLowerCase();
      const lastHyphenPart = stem.slice(stem.lastIndexOf('-') + 1);
      if (this.parameters.abbreviationTypes.has(stem) || this.parameters.abbreviationTypes.has(lastHyphenPart)) {
        token.abbreviation = true;
      } else {
        token.sentenceBreak = true;
      }
    }
  }

  private secondPass(token: PunktToken, next: PunktToken): void {
    if (!token.periodFinal) return;
    const type = typeWithoutPeriod(token);
    const nextType = typeWithoutSentencePeriod(next);
    const isInitial = initialPattern.test(token.text);

    if (this.parameters.collocations.has(`${type} ${nextType}`)) {
      token.sentenceBreak = false;
      token.abbreviation = true;
      return;
    }

    if ((token.abbreviation || token.ellipsis) && !isInitial) {
      const startsSentence = this.orthographicHeuristic(next);
      if (startsSentence === true) {
        token.sentenceBreak = true;
        return;
      }
      if (pythonIsUpper(firstCharacter(next.text)) && this.parameters.sentenceStarters.has(nextType)) {
        token.sentenceBreak = true;
        return;
      }
    }

    if (isInitial || type === '##number##') {
      const startsSentence = this.orthographicHeuristic(next);
      if (startsSentence === false) {
        token.sentenceBreak = false;
        token.abbreviation = true;
        return;
      }
      if (
        startsSentence === 'unknown' &&
        isInitial &&
        pythonIsUpper(firstCharacter(next.text)) &&
        !(this.orthography(nextType) & ORTHO_LC)
      ) {
        token.sentenceBreak = false;
        token.abbreviation = true;
      }
    }
  }

  /** Whether `token` starts a sentence, judging by how its type was capitalised in training. */
  private orthographicHeuristic(token: PunktToken): boolean | 'unknown' {
    if (PUNCTUATION.has(token.text)) return false;
    const context = this.orthography(typeWithoutSentencePeriod(token));
    const first = firstCharacter(token.text);
    if (pythonIsUpper(first) && context & ORTHO_LC && !(context & ORTHO_MID_UC)) return true;
    if (pythonIsLower(first) && (context & ORTHO_UC || !(context & ORTHO_BEG_LC))) return false;
    return 'unknown';
  }

  private orthography(type: string): number {
    return this.parameters.orthographicContext.get(type) ?? 0;
  }
}

function contextOf(text: string, wordSlice: [number, number], match: RegExpExecArray): string {
  return text.slice(wordSlice[0], wordSlice[1]) + match[0] + (match.groups?.after ?? '');
}

/** Index of the last ASCII whitespace (Python's `string.whitespace`) in `text[from, to)`, or -1. */
function lastAsciiWhitespaceIndex(text: string, from: number, to: number): number {
  for (let index = to - 1; index >= from; index -= 1) {
    const code = text.charCodeAt(index);
    if (code === 32 || (code >= 9 && code <= 13)) return index;
  }
  return -1;
}

/** Punkt's word tokens, line by line (paragraph and line starts are not needed here). */
function tokenizeWords(text: string): PunktToken[] {
  const tokens: PunktToken[] = [];
  for (const line of text.split('\n')) {
    if (!nonWhitespace.test(line)) continue;
    wordTokenPattern.lastIndex = 0;
    for (let match = wordTokenPattern.exec(line); match !== null; match = wordTokenPattern.exec(line)) {
      tokens.push(makeToken(match[0]));
    }
  }
  return tokens;
}

export const englishPunkt = new PunktSentenceTokenizer({
  abbreviationTypes: englishAbbreviationTypes,
  collocations: englishCollocations,
  sentenceStarters: englishSentenceStarters,
  // Seen lowercase and capitalised mid-sentence: only the initial rule changes (see punkt-english.ts).
  orthographicContext: new Map(englishCommonLowercaseWords.map((word) => [word, ORTHO_MID_LC | ORTHO_MID_UC])),
});

/** Sentences as NLTK's English Punkt model splits them. */
export function splitSentences(text: string): string[] {
  return englishPunkt.tokenize(text);
}

/** `len(nltk.sent_tokenize(text))` with the English model (see README for the known gap). */
export function countSentences(text: string): number {
  return englishPunkt.count(text);
}
