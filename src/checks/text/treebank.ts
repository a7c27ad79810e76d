/**
 * Word tokens as NLTK's `word_tokenize` produces them: Punkt sentences, each split by
 * the improved Treebank rules (quotes, punctuation, brackets, clitics such as `n't`,
 * `'s`, `can|not`). IFEval's `change_case:capital_word_frequency` counts the tokens
 * that are all capitals, so `DON'T` is two capital words (`DO`, `N'T`) and `U.S.` one.
 */
import { PYTHON_DIGIT_CLASS, PYTHON_WHITESPACE_CLASS, PYTHON_WORD_CLASS, pythonSplitWhitespace } from './python-text.js';
import { splitSentences } from './punkt.js';

/** A rewrite, with the characters one of which must occur for it to change anything. */
type Rule = [RegExp, string, string?];

const WS = PYTHON_WHITESPACE_CLASS;
// Python's `\b` is Unicode-aware; JavaScript's is ASCII-only, so spell it out.
const WORD_START = `(?<![${PYTHON_WORD_CLASS}])(?=[${PYTHON_WORD_CLASS}])`;
const WORD_END = `(?<=[${PYTHON_WORD_CLASS}])(?![${PYTHON_WORD_CLASS}])`;

const startingQuotes: Rule[] = [
  [/([«“‘„]|`+)/gu, ' $1 ', '«“‘„`'],
  [/^"/u, '``', '"'],
  [/(``)/gu, ' $1 ', '`'],
  [/([ ([{<])("|'{2})/gu, '$1 `` ', `"'`],
  [new RegExp(`(')(?!re|ve|ll|m|t|s|d|n)([${PYTHON_WORD_CLASS}])${WORD_END}`, 'giu'), '$1 $2', "'"],
];

const punctuation: Rule[] = [
  [new RegExp(`([^.])(\\.)([\\])}>"'»”’ ]*)[${WS}]*$`, 'u'), '$1 $2 $3 '],
  [new RegExp(`([:,])([^${PYTHON_DIGIT_CLASS}])`, 'gu'), ' $1 $2', ':,'],
  [/([:,])$/u, ' $1 ', ':,'],
  [/\.{2,}/gu, ' $& ', '.'],
  [/[;@#$%&]/gu, ' $& ', ';@#$%&'],
  [new RegExp(`([^.])(\\.)([\\])}>"']*)[${WS}]*$`, 'u'), '$1 $2$3 '],
  [/[?!]/gu, ' $& ', '?!'],
  [/([^'])' /gu, "$1 ' ", "'"],
  [/\*/gu, ' $& ', '*'],
];

const parensAndBrackets: Rule = [/[\][(){}<>]/gu, ' $& ', '[](){}<>'];
const doubleDashes: Rule = [/--/gu, ' -- ', '-'];

const endingQuotes: Rule[] = [
  [/([»”’])/gu, ' $1 ', '»”’'],
  [/''/gu, " '' ", "'"],
  [/"/gu, " '' ", '"'],
  [/([^' ])('[sS]|'[mM]|'[dD]|') /gu, '$1 $2 ', "'"],
  [/([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) /gu, '$1 $2 ', "'"],
];

/** Clitic splits, each with the lowercase text that must occur for it to apply. */
const contractions: Array<[RegExp, string, string]> = [
  ...[
    ['can', 'not'],
    ['d', "'ye"],
    ['gim', 'me'],
    ['gon', 'na'],
    ['got', 'ta'],
    ['lem', 'me'],
    ['more', "'n"],
  ].map(([first, second]): [RegExp, string, string] => [
    new RegExp(`${WORD_START}(${first})(${second})${WORD_END}`, 'giu'),
    ' $1 $2 ',
    first + second,
  ]),
  [new RegExp(`${WORD_START}(wan)(na)(?=[${WS}])`, 'giu'), ' $1 $2 ', 'wanna'],
  [new RegExp(` ('t)(is)${WORD_END}`, 'giu'), ' $1 $2 ', "'tis"],
  [new RegExp(` ('t)(was)${WORD_END}`, 'giu'), ' $1 $2 ', "'twas"],
];

function containsAny(text: string, characters: string): boolean {
  for (const character of characters) if (text.includes(character)) return true;
  return false;
}

function applyRules(text: string, rules: Rule[]): string {
  let result = text;
  for (const [pattern, replacement, needed] of rules) {
    if (needed === undefined || containsAny(result, needed)) result = result.replace(pattern, replacement);
  }
  return result;
}

function applyContractions(text: string): string {
  const lower = text.toLowerCase();
  let result = text;
  for (const [pattern, replacement, needed] of contractions) {
    if (lower.includes(needed)) result = result.replace(pattern, replacement);
  }
  return result;
}

/** NLTK's `NLTKWordTokenizer().tokenize(sentence)`. */
export function treebankTokenize(sentence: string): string[] {
  let text = applyRules(sentence, startingQuotes);
  text = applyRules(text, punctuation);
  text = applyRules(text, [parensAndBrackets, doubleDashes]);
  text = ` ${text} `;
  text = applyRules(text, endingQuotes);
  text = applyContractions(text);
  return pythonSplitWhitespace(text);
}

/** NLTK's `word_tokenize(text)`: English Punkt sentences, then Treebank tokens. */
export function wordTokenize(text: string): string[] {
  const tokens: string[] = [];
  for (const sentence of splitSentences(text)) for (const token of treebankTokenize(sentence)) tokens.push(token);
  return tokens;
}
