import { describe, expect, it } from 'vitest';
import { countSentences, splitSentences } from './punkt.js';

// Expected splits are what NLTK's English Punkt model gives for these texts.
describe('Punkt sentence splitting (NLTK English model)', () => {
  it('keeps known abbreviations inside the sentence', () => {
    expect(splitSentences('Dr. Watson met Mr. Holmes at 221B Baker St. on Tuesday. They talked for hours.')).toEqual([
      'Dr. Watson met Mr. Holmes at 221B Baker St. on Tuesday.',
      'They talked for hours.',
    ]);
  });

  it('does not split decimals and splits after a year', () => {
    expect(splitSentences('The price rose 3.5 percent in 2023. Analysts expected more.')).toEqual([
      'The price rose 3.5 percent in 2023.',
      'Analysts expected more.',
    ]);
  });

  it('treats an ellipsis before an unknown capitalised word as no break', () => {
    expect(splitSentences('Wait... What happened next? Nobody knew!')).toEqual(['Wait... What happened next?', 'Nobody knew!']);
  });

  it('keeps closing quotes and brackets with their sentence', () => {
    expect(splitSentences('She said "Stop." Then she left.')).toEqual(['She said "Stop."', 'Then she left.']);
    expect(splitSentences('(This is a sentence.) This is another.')).toEqual(['(This is a sentence.)', 'This is another.']);
  });

  it('handles initials before names and a single letter before a common word', () => {
    expect(countSentences('J. R. R. Tolkien wrote books. He was English.')).toBe(2);
    expect(countSentences('The U.S. economy grew. Europe did not.')).toBe(2);
    // The trained model has seen "it" in lowercase, so "B. It" ends a sentence; "c" is a
    // learned abbreviation, so "C. It" does not.
    expect(countSentences('Take vitamin B. It helps.')).toBe(2);
    expect(countSentences('Take vitamin C. It helps.')).toBe(1);
  });

  it('splits numbered list markers the way NLTK does', () => {
    expect(splitSentences('1. First item\n2. Second item\n3. Third item')).toEqual([
      '1.',
      'First item\n2.',
      'Second item\n3.',
      'Third item',
    ]);
  });

  it('groups repeated punctuation and counts text without a final period', () => {
    expect(splitSentences('I love it!!! Do you?')).toEqual(['I love it!!!', 'Do you?']);
    expect(countSentences('No terminal punctuation here')).toBe(1);
    expect(countSentences('   ')).toBe(0);
  });

  it('splits after e.g. and etc., which the English model did not learn as abbreviations', () => {
    expect(splitSentences('e.g. apples, etc. The list goes on.')).toEqual(['e.g.', 'apples, etc.', 'The list goes on.']);
    expect(splitSentences('We bought pens, paper, etc. and then left.')).toEqual(['We bought pens, paper, etc.', 'and then left.']);
    // A learned abbreviation followed by a lowercase word stays in the sentence.
    expect(countSentences('It costs $5 vs. the usual $7.')).toBe(1);
  });

  it("reproduces IFEval's own sentence-count cases", () => {
    expect(countSentences('xx,x. xx,x! xx/x. x{x}x?')).toBe(4);
    expect(countSentences('xxxx. xx,x! xxxx. x(x)x?')).toBe(4);
    // "x." after "}" is an initial followed by a lowercase word: no break.
    expect(countSentences('xx-x. xx,x! xx}x. x,xx?')).toBe(3);
  });
});
