/**
 * Derived facts about one response text (word count, sentences, capital words,
 * language, case), computed on first use and shared by every check that reads the
 * same text. A rubric usually has several criteria over one response, and loose mode
 * evaluates eight variants of it, so recomputing tokenisations per check would
 * dominate the cost.
 */
import { detectLanguage } from './language/detector.js';
import { splitSentences } from './text/punkt.js';
import { countWordRuns, pythonIsLower, pythonIsUpper, pythonStrip } from './text/python-text.js';
import { treebankTokenize } from './text/treebank.js';

const hasUppercase = /\p{Uppercase}/u;

export class TextFacts {
  private strippedValue?: string;
  private lowerValue?: string;
  private wordCountValue?: number;
  private sentencesValue?: string[];
  private letterCounts?: Map<string, number>;
  private capitalWordCountValue?: number;
  private languageValue?: string | null;
  private isUpperValue?: boolean;
  private isLowerValue?: boolean;

  constructor(readonly text: string) {}

  /** `text.strip()`. */
  get stripped(): string {
    return (this.strippedValue ??= pythonStrip(this.text));
  }

  get lower(): string {
    return (this.lowerValue ??= this.text.toLowerCase());
  }

  /** IFEval words: runs of word characters (`\w+`). */
  get wordCount(): number {
    return (this.wordCountValue ??= countWordRuns(this.text));
  }

  /** Sentences by NLTK's English Punkt model. */
  get sentences(): string[] {
    return (this.sentencesValue ??= splitSentences(this.text));
  }

  get sentenceCount(): number {
    return this.sentences.length;
  }

  /** NLTK word tokens (Punkt sentences, then Treebank) that are all capitals (`str.isupper()`). */
  get capitalWordCount(): number {
    if (this.capitalWordCountValue === undefined) {
      let count = 0;
      for (const sentence of this.sentences) {
        // Without an uppercase letter no token of the sentence can be all capitals.
        if (!hasUppercase.test(sentence)) continue;
        for (const token of treebankTokenize(sentence)) if (pythonIsUpper(token)) count += 1;
      }
      this.capitalWordCountValue = count;
    }
    return this.capitalWordCountValue;
  }

  /** Occurrences of one character in the lowercased text (IFEval's letter counts). */
  countInLower(character: string): number {
    this.letterCounts ??= new Map();
    let count = this.letterCounts.get(character);
    if (count === undefined) {
      count = 0;
      const lower = this.lower;
      for (let index = lower.indexOf(character); index >= 0; index = lower.indexOf(character, index + character.length)) count += 1;
      this.letterCounts.set(character, count);
    }
    return count;
  }

  /** langdetect's answer; `null` when the text has nothing to detect from. */
  get language(): string | null {
    if (this.languageValue === undefined) this.languageValue = detectLanguage(this.text);
    return this.languageValue;
  }

  get isUpper(): boolean {
    return (this.isUpperValue ??= pythonIsUpper(this.text));
  }

  get isLower(): boolean {
    return (this.isLowerValue ??= pythonIsLower(this.text));
  }
}

/** A small least-recently-used map: enough to cover the texts of the item being graded. */
class RecentCache<Value> {
  private readonly entries = new Map<string, Value>();

  constructor(private readonly capacity: number) {}

  get(key: string, create: () => Value): Value {
    const found = this.entries.get(key);
    if (found !== undefined) {
      // Re-insert so the entry counts as recently used.
      this.entries.delete(key);
      this.entries.set(key, found);
      return found;
    }
    const value = create();
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
    return value;
  }

  clear(): void {
    this.entries.clear();
  }
}

const factsCache = new RecentCache<TextFacts>(128);
const variantsCache = new RecentCache<Array<TextFacts | null>>(32);

export function textFacts(text: string): TextFacts {
  return factsCache.get(text, () => new TextFacts(text));
}

/**
 * Facts for each loose variant, in `looseVariantTexts` order, with `null` where a variant
 * cannot change the verdict: the same text as an earlier variant (no `*` to remove) or an
 * empty one (a single-line response has nothing left once a line is dropped).
 */
export function looseVariants(response: string): Array<TextFacts | null> {
  return variantsCache.get(response, () => {
    const hasStar = response.includes('*');
    const variants: Array<TextFacts | null> = [textFacts(response), hasStar ? new TextFacts(response.replaceAll('*', '')) : null];
    const lines = response.split('\n');
    if (lines.length === 1) return [...variants, null, null, null, null, null, null];
    const dropped = [
      pythonStrip(lines.slice(1).join('\n')),
      pythonStrip(lines.slice(0, -1).join('\n')),
      lines.length === 2 ? '' : pythonStrip(lines.slice(1, -1).join('\n')),
    ];
    for (const text of dropped) variants.push(text.length > 0 ? new TextFacts(text) : null);
    for (const text of dropped) variants.push(hasStar && text.includes('*') ? new TextFacts(text.replaceAll('*', '')) : null);
    return variants;
  });
}

/** Drops cached facts (tests and benchmarks that must not reuse earlier work). */
export function clearTextFactsCache(): void {
  factsCache.clear();
  variantsCache.clear();
}
