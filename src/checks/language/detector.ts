/**
 * Language identification that reproduces Python `langdetect` 1.0.9, which IFEval uses
 * for `language:response_language` and the `change_case:english_*` checks: the same
 * 55 character n-gram profiles, the same text cleaning and normalisation, and the same
 * naive-Bayes estimate averaged over 7 randomised trials. The trials draw from a seeded
 * generator, so a text always gets the same answer (langdetect's own answer varies
 * between runs only for texts whose top languages are nearly tied).
 *
 * Not reproduced: langdetect's grouping of CJK ideographs into representative
 * characters (it only sharpens zh-cn/zh-tw/ja separation).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliDecompressSync } from 'node:zlib';
import { RubricateError } from '../../errors.js';
import { seededRandom, type RandomSource } from '../../util/random.js';

const TRIALS = 7;
const ALPHA = 0.5;
const ALPHA_WIDTH = 0.05;
const ITERATION_LIMIT = 1000;
const PROBABILITY_THRESHOLD = 0.1;
const CONVERGENCE_THRESHOLD = 0.99999;
const BASE_FREQUENCY = 10000;
const MAX_TEXT_LENGTH = 10000;
const DEFAULT_SEED = 0;

export interface LanguageProbability {
  /** langdetect's code: ISO 639-1 except `zh-cn` and `zh-tw`. */
  language: string;
  probability: number;
}

interface ProfileTable {
  languages: string[];
  /** Sparse n-gram probabilities per language, turned dense on first use. */
  sparse: Map<string, Array<[number, number]>>;
  dense: Map<string, Float64Array>;
}

let table: ProfileTable | undefined;

/**
 * The profiles are a 700 KB asset read on the first detection only, so commands that never
 * detect a language never pay for them. Found by walking up from this module, which works
 * from the sources and from a built bundle alike.
 */
function profilesFile(): string {
  let directory = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(directory, 'assets', 'langdetect-profiles.br');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(directory);
    if (parent === directory) throw new RubricateError('INTERNAL', 'language profiles (assets/langdetect-profiles.br) not found next to the package');
    directory = parent;
  }
}

function profiles(): ProfileTable {
  if (table) return table;
  const text = brotliDecompressSync(readFileSync(profilesFile())).toString('utf8');
  const languages: string[] = [];
  const sparse = new Map<string, Array<[number, number]>>();
  for (const line of text.split('\n')) {
    const fields = line.split('\t');
    const index = languages.length;
    languages.push(fields[0]);
    const totals = fields[1].split(' ').map((value) => parseInt(value, 36));
    for (let field = 2; field + 1 < fields.length; field += 2) {
      const ngram = fields[field];
      const length = [...ngram].length;
      if (length < 1 || length > 3) continue;
      const probability = parseInt(fields[field + 1], 36) / totals[length - 1];
      const entry = sparse.get(ngram);
      if (entry) entry.push([index, probability]);
      else sparse.set(ngram, [[index, probability]]);
    }
  }
  table = { languages, sparse, dense: new Map() };
  return table;
}

function denseProbabilities(profile: ProfileTable, ngram: string): Float64Array {
  let vector = profile.dense.get(ngram);
  if (!vector) {
    vector = new Float64Array(profile.languages.length);
    for (const [index, probability] of profile.sparse.get(ngram) ?? []) vector[index] = probability;
    profile.dense.set(ngram, vector);
  }
  return vector;
}

const URL_PATTERN = /https?:\/\/[-_.?&~;+=/#0-9A-Za-z]{1,2076}/g;
const MAIL_PATTERN = /[-_.0-9A-Za-z]{1,64}@[-_0-9A-Za-z]{1,255}[-_.0-9A-Za-z]{1,255}/g;
// Vietnamese written with combining tone marks is folded to precomposed letters.
const VIETNAMESE_DECOMPOSED = /([AEIOUYaeiouy\u00c2\u00ca\u00d4\u00e2\u00ea\u00f4\u0102\u0103\u01a0\u01a1\u01af\u01b0])([\u0300\u0301\u0303\u0309\u0323])/g;
const LATIN1_EXCLUDED = new Set(['\u00a0', '\u00ab', '\u00b0', '\u00bb']);
const upperPattern = /\p{Uppercase}/u;
const lowerOrTitlePattern = /[\p{Lowercase}\p{Lt}]/u;

/** Python's one-character `str.isupper()`. */
function isUpperCharacter(character: string): boolean {
  return upperPattern.test(character) && !lowerOrTitlePattern.test(character);
}

function normalizeCharacter(character: string): string {
  const code = character.codePointAt(0) ?? 0;
  if (code <= 0x7f) {
    return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) ? character : ' ';
  }
  if (code <= 0xff) return LATIN1_EXCLUDED.has(character) ? ' ' : character;
  if (code >= 0x180 && code <= 0x24f) {
    // Romanian s/t with comma below are folded to the cedilla forms the profiles use.
    if (code === 0x219) return '\u015f';
    if (code === 0x21b) return '\u0163';
    return character;
  }
  if (code >= 0x600 && code <= 0x6ff) return code === 0x6cc ? '\u064a' : character;
  if (code >= 0x1e00 && code <= 0x1eff) return code >= 0x1ea0 ? '\u1ec3' : character;
  if (code >= 0x2000 && code <= 0x206f) return ' ';
  if (code >= 0x3040 && code <= 0x309f) return '\u3042';
  if (code >= 0x30a0 && code <= 0x30ff) return '\u30a2';
  if ((code >= 0x3100 && code <= 0x312f) || (code >= 0x31a0 && code <= 0x31bf)) return '\u3105';
  if (code >= 0xac00 && code <= 0xd7af) return '\uac00';
  return character;
}

/** Text as langdetect sees it: URLs and e-mails blanked, spaces collapsed, capped at 10,000 characters. */
function prepareText(input: string): string[] {
  const text = input
    .replace(URL_PATTERN, ' ')
    .replace(MAIL_PATTERN, ' ')
    .replace(VIETNAMESE_DECOMPOSED, (pair) => pair.normalize('NFC'));
  const characters: string[] = [];
  let previous = '';
  let seen = 0;
  for (const character of text) {
    if (seen >= MAX_TEXT_LENGTH) break;
    seen += 1;
    if (character !== ' ' || previous !== ' ') characters.push(character);
    previous = character;
  }
  // Mostly non-Latin text: Latin letters are dropped, they would only add noise.
  let latin = 0;
  let nonLatin = 0;
  for (const character of characters) {
    if (character >= 'A' && character <= 'z') latin += 1;
    else if (character >= '\u0300') {
      const code = character.codePointAt(0) ?? 0;
      if (!(code >= 0x1e00 && code <= 0x1eff)) nonLatin += 1;
    }
  }
  if (latin * 2 < nonLatin) return characters.filter((character) => character < 'A' || character > 'z');
  return characters;
}

function extractNgrams(characters: string[], profile: ProfileTable): string[] {
  const ngrams: string[] = [];
  let grams: string[] = [' '];
  let capitalWord = false;
  for (const raw of characters) {
    const character = normalizeCharacter(raw);
    const last = grams[grams.length - 1];
    if (last === ' ') {
      grams = [' '];
      capitalWord = false;
      if (character === ' ') continue;
    } else if (grams.length >= 3) {
      grams.shift();
    }
    grams.push(character);
    if (isUpperCharacter(character)) {
      if (isUpperCharacter(last)) capitalWord = true;
    } else {
      capitalWord = false;
    }
    // Inside an all-capitals word langdetect ignores the n-grams (acronyms mislead it).
    if (capitalWord) continue;
    for (let size = 1; size <= 3 && size <= grams.length; size += 1) {
      const ngram = grams.slice(grams.length - size).join('');
      if (ngram !== ' ' && profile.sparse.has(ngram)) ngrams.push(ngram);
    }
  }
  return ngrams;
}

function gaussian(random: RandomSource): number {
  const angle = random() * 2 * Math.PI;
  const radius = Math.sqrt(-2 * Math.log(1 - random()));
  return Math.cos(angle) * radius;
}

function normalizeInPlace(probabilities: Float64Array): number {
  let sum = 0;
  for (const value of probabilities) sum += value;
  let maximum = 0;
  for (let index = 0; index < probabilities.length; index += 1) {
    const value = probabilities[index] / sum;
    if (value > maximum) maximum = value;
    probabilities[index] = value;
  }
  return maximum;
}

/**
 * Languages above langdetect's 0.1 reporting threshold, most probable first; `null` when
 * the text has no usable n-grams (langdetect raises "No features in text" there).
 */
export function detectLanguageProbabilities(text: string, seed = DEFAULT_SEED): LanguageProbability[] | null {
  const profile = profiles();
  const ngrams = extractNgrams(prepareText(text), profile);
  if (ngrams.length === 0) return null;
  const languageCount = profile.languages.length;
  const average = new Float64Array(languageCount);
  const random = seededRandom(seed);
  for (let trial = 0; trial < TRIALS; trial += 1) {
    const probabilities = new Float64Array(languageCount).fill(1 / languageCount);
    const weight = (ALPHA + gaussian(random) * ALPHA_WIDTH) / BASE_FREQUENCY;
    for (let iteration = 0; ; iteration += 1) {
      const vector = denseProbabilities(profile, ngrams[Math.floor(random() * ngrams.length)]);
      for (let index = 0; index < languageCount; index += 1) probabilities[index] *= weight + vector[index];
      if (iteration % 5 === 0) {
        if (normalizeInPlace(probabilities) > CONVERGENCE_THRESHOLD || iteration >= ITERATION_LIMIT) break;
      }
    }
    for (let index = 0; index < languageCount; index += 1) average[index] += probabilities[index] / TRIALS;
  }
  const result: LanguageProbability[] = [];
  for (let index = 0; index < languageCount; index += 1) {
    if (average[index] > PROBABILITY_THRESHOLD) {
      result.push({ language: profile.languages[index], probability: average[index] });
    }
  }
  return result.sort((first, second) => second.probability - first.probability);
}

/**
 * langdetect's `detect(text)`: the most probable language, `'unknown'` when none passes
 * the threshold, `null` when the text has nothing to detect from.
 */
export function detectLanguage(text: string, seed = DEFAULT_SEED): string | null {
  const probabilities = detectLanguageProbabilities(text, seed);
  if (probabilities === null) return null;
  return probabilities[0]?.language ?? 'unknown';
}

/** Codes the detector can return (langdetect's 55 profiles). */
export function supportedLanguages(): readonly string[] {
  return profiles().languages;
}
