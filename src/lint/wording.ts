/**
 * Wording heuristics of the static lint rules. Each errs toward silence: a rule that flags sound
 * criteria is ignored, so a pattern is flagged only where its usual sound readings are ruled out
 * (an anchor beside a graded word, a noun pair such as "pros and cons" after "and").
 */
import { wordTokens } from '../generation/measures.js';

/** Words that grade without saying against what. */
const vagueWords = new Set([
  'good', 'bad', 'appropriate', 'appropriately', 'inappropriate', 'clear', 'clearly', 'adequate', 'adequately', 'sufficient',
  'sufficiently', 'reasonable', 'reasonably', 'proper', 'properly', 'suitable', 'suitably', 'helpful', 'well', 'nice', 'quality',
  'satisfactory', 'acceptable', 'decent', 'relevant', 'thorough', 'thoroughly', 'comprehensive', 'comprehensively', 'high',
]);

/** What anchors a graded word: an example, a list, a number, a quotation, a definition. */
const anchorPattern = /\b(such as|e\.g\.|for example|for instance|including|includes|namely|i\.e\.|specifically|defined as|meaning|at least|at most|no more than|fewer than|more than|within)\b|\d|["“”'‘’(:]/i;

/** Words that say nothing concrete by themselves (left out when counting what a criterion names). */
const fillerWords = new Set([
  'the', 'a', 'an', 'response', 'answer', 'model', 'assistant', 'is', 'are', 'be', 'it', 'its', 'of', 'to', 'and', 'or', 'in', 'for',
  'with', 'on', 'that', 'this', 'user', 'users', 'user\'s', 's', 'provides', 'gives', 'has', 'uses', 'written', 'overall', 'very',
]);

/** The vague words of a criterion that nothing anchors; empty when it is anchored or names enough concrete things. */
export function unanchoredVagueWords(text: string): string[] {
  const tokens = wordTokens(text);
  const vague = [...new Set(tokens.filter((token) => vagueWords.has(token)))];
  if (vague.length === 0 || anchorPattern.test(text)) return [];
  // "Clearly explains how therapy works and what to expect in each session" names what it grades.
  const concrete = tokens.filter((token) => !vagueWords.has(token) && !fillerWords.has(token));
  return concrete.length >= 6 ? [] : vague;
}

/** Negations that turn "mentions X" into "does not mention X". */
const negationPattern = /\b(does not|doesn't|do not|don't|did not|must not|should not|shouldn't|is not|isn't|are not|aren't|fails to|failing to|never|not|no|avoids|without|omits)\b/gi;

/** The text with its negations removed and its words lightly stemmed, and whether it was negated. */
export function polarCore(text: string): { core: string; negated: boolean } {
  const matches = text.match(negationPattern) ?? [];
  const stripped = text.replace(negationPattern, ' ');
  const core = wordTokens(stripped)
    .filter((token) => !fillerWords.has(token))
    .map(stem)
    .join(' ');
  return { core, negated: matches.length % 2 === 1 };
}

/** Plural and third-person endings removed, so "mentions" and "mention" meet. */
function stem(token: string): string {
  if (token.length > 4 && token.endsWith('ies')) return `${token.slice(0, -3)}y`;
  if (token.length > 3 && token.endsWith('es') && /(ss|sh|ch|x)es$/.test(token)) return token.slice(0, -2);
  if (token.length > 3 && token.endsWith('s') && !token.endsWith('ss')) return token.slice(0, -1);
  return token;
}

/** Verbs that open a requirement: after "and", they start a second one. */
const requirementVerbs = new Set([
  'mention', 'explain', 'provide', 'include', 'state', 'recommend', 'advise', 'describe', 'list', 'cite', 'avoid', 'ask', 'note', 'discuss',
  'suggest', 'identify', 'use', 'give', 'offer', 'acknowledge', 'address', 'warn', 'emphasize', 'emphasise', 'refer', 'clarify', 'define',
  'summarize', 'summarise', 'compare', 'specify', 'answer', 'recognize', 'recognise', 'encourage', 'express', 'show', 'present', 'outline',
  'highlight', 'quote', 'link', 'ensure', 'tell', 'inform', 'refuse', 'decline', 'contain', 'end', 'start', 'begin', 'respond', 'write',
]);

/** The verb of a requirement in the third person ("mentions", "advises"), as rubric criteria open; undefined otherwise. */
function requirementVerb(token: string | undefined): string | undefined {
  if (token === undefined || !token.endsWith('s')) return undefined;
  const base = stem(token);
  if (requirementVerbs.has(base)) return base;
  return requirementVerbs.has(token.slice(0, -1)) ? token.slice(0, -1) : undefined;
}

/**
 * A binary criterion that asks two things at once, in parallel clauses: "Mentions X and explains
 * Y", "Lists X; also cites Y". Both clauses must open with a requirement verb in the same form and
 * the first must name something of its own, so noun pairs ("pros and cons", "signs and
 * symptoms"), shared objects ("Acknowledges and addresses the concern"), gerunds ("identifying and
 * avoiding triggers") and long multi-sentence instructions (a grading guide, not one check) pass.
 */
export function stackedParts(text: string): [string, string] | undefined {
  if (/\n/.test(text.trim()) || text.trim().split(/(?<=[.!?])\s+/).length > 1) return undefined;
  if (requirementVerb(wordTokens(text)[0]) === undefined) return undefined;
  const joint = /(?:,?\s+and\s+(?:also\s+)?|;\s*(?:and\s+)?(?:also\s+)?|,?\s+as well as\s+|,\s+and then\s+)/gi;
  for (const match of text.matchAll(joint)) {
    const before = text.slice(0, match.index).trim();
    const after = text.slice((match.index ?? 0) + match[0].length).trim();
    if (wordTokens(before).length < 2) continue;
    if (requirementVerb(wordTokens(after)[0]) !== undefined) return [before, after];
  }
  return undefined;
}

/** Words of a rule a judge cannot observe in the response: intentions, beliefs, later events. */
const unobservablePattern = /\b(intends?|intended|intentions?|believes?|believed|thinks?|internally|secretly|truly|in the future|later on|will be|user (?:is|was|will be|feels?) (?:satisfied|happy|convinced))\b/i;

/** Why a hard rule without a check cannot be verified from the response, or undefined when it can. */
export function unverifiableReason(text: string): string | undefined {
  const unobservable = text.match(unobservablePattern);
  if (unobservable) return `"${unobservable[0]}" is not something a judge can see in one response`;
  const vague = unanchoredVagueWords(text);
  if (vague.length > 0) return `a pass/fail gate on the graded word${vague.length > 1 ? 's' : ''} ${vague.map((word) => `"${word}"`).join(', ')} has no threshold`;
  return undefined;
}

/** Words that may be capitalised inside a sentence without naming a topic. */
const ordinaryCapitals = new Set(['I', 'AI', 'OK', 'URL', 'URLs', 'JSON', 'API', 'English', 'Markdown', 'LLM', 'FAQ', 'PDF', 'HTML', 'CSV', 'USD', 'Yes', 'No']);

/** Topic-specific wording of a criterion meant for any prompt: names, figures, quoted phrases. */
export function topicSpecificWords(text: string): string[] {
  const found: string[] = [];
  for (const sentence of text.split(/(?<=[.!?])\s+/)) {
    const words = sentence.match(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu) ?? [];
    // The first word of a sentence is capitalised anyway.
    for (const word of words.slice(1)) if (/^\p{Lu}/u.test(word) && !ordinaryCapitals.has(word)) found.push(word);
  }
  for (const figure of text.match(/\b\d[\d.,]*\s*(?:%|mg|kg|g|ml|km|m|cm|years?|days?|hours?|USD|\$)?/g) ?? []) found.push(figure.trim());
  for (const quoted of text.match(/["“][^"”]{2,60}["”]/g) ?? []) found.push(quoted);
  return [...new Set(found)];
}
