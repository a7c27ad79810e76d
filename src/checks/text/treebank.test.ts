import { describe, expect, it } from 'vitest';
import { treebankTokenize, wordTokenize } from './treebank.js';

// Expected tokens are NLTK's word_tokenize output for the same strings.
describe('NLTK word tokens', () => {
  it("splits clitics: DON'T is DO + N'T, can't is ca + n't", () => {
    expect(wordTokenize("I DON'T think so, but YOU can't say THAT!")).toEqual([
      'I', 'DO', "N'T", 'think', 'so', ',', 'but', 'YOU', 'ca', "n't", 'say', 'THAT', '!',
    ]);
  });

  it('keeps internal periods, splits brackets and converts double quotes', () => {
    expect(wordTokenize('The U.S. ARMY (USA) said: "GO NOW."')).toEqual([
      'The', 'U.S.', 'ARMY', '(', 'USA', ')', 'said', ':', '``', 'GO', 'NOW', '.', "''",
    ]);
  });

  it('keeps hyphenated words whole and splits possessives', () => {
    expect(wordTokenize("WELL-KNOWN AI's rules; I'M here.")).toEqual([
      'WELL-KNOWN', 'AI', "'s", 'rules', ';', 'I', "'M", 'here', '.',
    ]);
  });

  it('splits the MacIntyre contractions', () => {
    expect(wordTokenize("Let's gonna cannot 'tis fine.")).toEqual(['Let', "'s", 'gon', 'na', 'can', 'not', "'t", 'is', 'fine', '.']);
  });

  it('only splits a period at the end of the sentence it tokenises', () => {
    expect(treebankTokenize('Go to St. Louis now.')).toEqual(['Go', 'to', 'St.', 'Louis', 'now', '.']);
  });
});
