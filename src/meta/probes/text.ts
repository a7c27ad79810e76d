/**
 * Text helpers for the probes: sentence spans that respect line structure (lists, headings),
 * content tokens, and the token-overlap similarity used to find the sentence that carries a
 * criterion.
 */
import { englishPunkt } from '../../checks/text/punkt.js';

export interface SentenceSpan {
  start: number;
  end: number;
  text: string;
}

/**
 * Sentences of a response with their offsets. Each line is split on its own (Punkt, as NLTK
 * splits English) because list items, headings and table rows end without punctuation and
 * would otherwise run into the next line.
 */
export function sentenceSpans(text: string): SentenceSpan[] {
  const spans: SentenceSpan[] = [];
  let lineStart = 0;
  for (const line of text.split('\n')) {
    if (line.trim() !== '') {
      for (const [start, end] of englishPunkt.spans(line)) {
        const sentence = line.slice(start, end);
        if (sentence.trim() === '') continue;
        spans.push({ start: lineStart + start, end: lineStart + end, text: sentence });
      }
    }
    lineStart += line.length + 1;
  }
  return spans;
}

/** Function words that say nothing about what a sentence is about. */
const stopWords = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by can could did do does ' +
    'doing down during each few for from further had has have having he her here hers herself him himself his how i if in into is it its itself ' +
    'just me more most my myself no nor not now of off on once only or other our ours ourselves out over own same she should so some such than that ' +
    'the their theirs them themselves then there these they this those through to too under until up very was we were what when where which while ' +
    'who whom why will with would you your yours yourself yourselves response responses answer mentions mention states state says provides provide ' +
    'includes include explains explain gives give user model'
  ).split(' '),
);

/** A light suffix strip so "recommends" matches "recommend" and "doctors" matches "doctor". */
function stem(token: string): string {
  if (token.length > 5 && token.endsWith('ing')) return token.slice(0, -3);
  if (token.length > 4 && token.endsWith('ed')) return token.slice(0, -2);
  if (token.length > 4 && token.endsWith('es')) return token.slice(0, -2);
  if (token.length > 3 && token.endsWith('s') && !token.endsWith('ss')) return token.slice(0, -1);
  return token;
}

/** Distinct content tokens: lower-cased letter/digit runs, stop words dropped, lightly stemmed. */
export function contentTokens(text: string): Set<string> {
  const tokens = new Set<string>();
  for (const match of text.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) {
    const token = match[0];
    if (stopWords.has(token)) continue;
    if (token.length === 1 && !/\p{N}/u.test(token)) continue;
    tokens.add(stem(token));
  }
  return tokens;
}

export interface Similarity {
  /** Content tokens the two texts share. */
  shared: number;
  /** Shared ÷ distinct tokens of both (Jaccard). */
  jaccard: number;
}

export function tokenOverlap(left: ReadonlySet<string>, right: ReadonlySet<string>): Similarity {
  let shared = 0;
  for (const token of left) if (right.has(token)) shared += 1;
  const union = left.size + right.size - shared;
  return { shared, jaccard: union > 0 ? shared / union : 0 };
}

export interface SupportingSentence extends SentenceSpan {
  index: number;
  similarity: Similarity;
}

/**
 * The sentence most similar to a criterion: most shared content tokens, then highest
 * Jaccard (a shorter sentence with the same overlap is more specific), then the earliest.
 * None when no sentence shares at least two content tokens with the criterion (one when the
 * criterion has a single content token): a lone shared word is too weak a sign that the
 * sentence is the one that satisfies it.
 */
export function mostSimilarSentence(sentences: readonly SentenceSpan[], criterionText: string): SupportingSentence | undefined {
  const criterionTokens = contentTokens(criterionText);
  const minimumShared = Math.max(1, Math.min(2, criterionTokens.size));
  let best: SupportingSentence | undefined;
  sentences.forEach((sentence, index) => {
    const similarity = tokenOverlap(criterionTokens, contentTokens(sentence.text));
    if (similarity.shared < minimumShared) return;
    const better =
      !best || similarity.shared > best.similarity.shared || (similarity.shared === best.similarity.shared && similarity.jaccard > best.similarity.jaccard);
    if (better) best = { ...sentence, index, similarity };
  });
  return best;
}

/**
 * The text with one span removed, tidied: the space after it goes too, and a line left
 * holding nothing but a list marker or whitespace is dropped.
 */
export function removeSpan(text: string, start: number, end: number): string {
  let cut = end;
  while (cut < text.length && (text[cut] === ' ' || text[cut] === '\t')) cut += 1;
  // A list item's marker stays with the rest of its line.
  const lineOfStart = text.lastIndexOf('\n', start - 1) + 1;
  if (text.slice(lineOfStart, start).trim() === '') {
    const marker = /^(?:[-*+]|\d+[.)])[ \t]+/.exec(text.slice(start, end));
    if (marker) start += marker[0].length;
  }
  const before = text.slice(0, start);
  const after = text.slice(cut);
  const lineStart = before.lastIndexOf('\n') + 1;
  const nextBreak = after.indexOf('\n');
  const restOfLine = nextBreak < 0 ? after : after.slice(0, nextBreak);
  const leftOnLine = before.slice(lineStart) + restOfLine;
  if (/^\s*(?:[-*+]|\d+[.)])?\s*$/.test(leftOnLine)) {
    // The whole line was that sentence: drop the line and its break.
    const remainder = nextBreak < 0 ? '' : after.slice(nextBreak + 1);
    return (text.slice(0, lineStart) + remainder).replace(/\n{3,}/g, '\n\n').replace(/^\n+/, '').replace(/\n+$/, '');
  }
  // Only the edited line is tidied: trailing spaces elsewhere may be Markdown line breaks.
  const editedLine = (before.slice(lineStart) + restOfLine).replace(/[ \t]+$/, '');
  const remainder = nextBreak < 0 ? '' : after.slice(nextBreak);
  return text.slice(0, lineStart) + editedLine + remainder;
}
