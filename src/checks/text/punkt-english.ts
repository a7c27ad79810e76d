/**
 * Parameters of NLTK's pre-trained English Punkt model (`tokenizers/punkt/english`),
 * which IFEval uses to count sentences: the learned abbreviation types, collocations
 * and frequent sentence starters. The model's orthographic-context table (about 30,000
 * word types) is not included; see README.md for what that changes.
 */

export const englishAbbreviationTypes: ReadonlySet<string> = new Set([
  'ct', 'm.j', 't', 'a.c', 'n.h', 'ms', 'p.a.m', 'dr', 'pa', 'p.m', 'u.k', 'st', 'dec', 'u.s.a', 'lt', 'g.k',
  'adm', 'p', 'h.m', 'ga', 'tenn', 'yr', 'sen', 'n.c', 'j.j', 'd.h', 's.g', 'inc', 'vs', 's.p.a', 'a.t', 'n',
  'feb', 'sr', 'jan', 's.a.y', 'n.y', 'col', 'g.f', 'c.o.m.b', 'd', 'ft', 'va', 'r.k', 'e.f', 'chg', 'r.i',
  'a.g', 'minn', 'a.h', 'k', 'n.j', 'm', 'l.f', 'f.j', 'gen', 'i.m.s', 's.a', 'aug', 'j.p', 'okla', 'm.d.c',
  'ltd', 'oct', 's', 'vt', 'r.a', 'j.c', 'ariz', 'w.w', 'b.v', 'ore', 'h', 'w.r', 'e.h', 'mrs', 'cie', 'corp',
  'w', 'n.v', 'a.d', 'r.j', 'ok', '. . ', 'e.m', 'w.c', 'ill', 'nov', 'u.s', 'prof', 'conn', 'u.s.s.r', 'mg',
  'f.g', 'ph.d', 'g', 'calif', 'messrs', 'h.f', 'wash', 'tues', 'sw', 'bros', 'u.n', 'l', 'wis', 'mr', 'sep',
  'd.c', 'ave', 'e.l', 'co', 's.s', 'reps', 'c', 'r.t', 'h.c', 'r', 'wed', 'a.s', 'v', 'fla', 'jr', 'r.h',
  'c.v', 'm.b.a', 'rep', 'a.a', 'e', 'c.i.t', 'l.a', 'b.f', 'j.b', 'd.w', 'j.k', 'ala', 'f', 'w.va', 'sept',
  'mich', 'n.m', 'j.r', 'l.p', 's.c', 'colo', 'fri', 'a.m', 'g.d', 'kan', 'maj', 'ky', 'a.m.e', 'n.d', 't.j',
  'cos', 'nev',
]);

/** Word pairs the model learned are joined across a period (`##number##` = any number). */
export const englishCollocations: ReadonlySet<string> = new Set(
  [
    ['##number##', 'international'], ['##number##', 'rj'], ['##number##', 'commodities'], ['##number##', 'cooper'],
    ['b', 'stewart'], ['##number##', 'genentech'], ['##number##', 'wedgestone'], ['i', 'toussie'],
    ['##number##', 'pepper'], ['j', 'fialka'], ['o', 'ludcke'], ['##number##', 'insider'], ['##number##', 'aes'],
    ['i', 'magnin'], ['##number##', 'credit'], ['##number##', 'corrections'], ['##number##', 'financing'],
    ['##number##', 'henley'], ['##number##', 'business'], ['##number##', 'pay-fone'], ['b', 'wigton'],
    ['b', 'edelman'], ['b', 'levine'], ['##number##', 'leisure'], ['b', 'smith'], ['j', 'walter'],
    ['##number##', 'pegasus'], ['##number##', 'dividend'], ['j', 'aron'], ['##number##', 'review'],
    ['##number##', 'abreast'], ['##number##', 'who'], ['##number##', 'letters'], ['##number##', 'colgate'],
    ['##number##', 'cbot'], ['##number##', 'notable'], ['##number##', 'zimmer'],
  ].map(([first, second]) => `${first} ${second}`),
);

export const englishSentenceStarters: ReadonlySet<string> = new Set([
  'most', 'he', 'since', 'so', 'both', 'these', 'it', 'nevertheless', 'this', 'indeed', 'however', 'instead',
  'under', 'similarly', 'some', 'though', 'while', 'when', 'in', 'despite', 'although', 'nonetheless', 'thus',
  'there', 'if', 'the', 'nor', 'separately', 'moreover', 'but', 'they', 'yet', 'many', 'according', 'sales',
  'among', 'meanwhile', 'even', 'i',
]);

/**
 * Stand-in for the trained orthographic-context table: common English words that are
 * written in lowercase mid-sentence (and may be capitalised there too). The trained
 * model knows such words, so a single letter followed by one of them capitalised
 * ("vitamin C. It ...", "located in o. Let's ...") ends a sentence, while a letter
 * followed by a name ("J. Smith") does not. Words outside this list behave as unseen
 * types do in the model; see README.md.
 */
export const englishCommonLowercaseWords: readonly string[] = [
  'a', 'about', 'after', 'all', 'also', 'an', 'and', 'another', 'any', 'are', 'as', 'at', 'be', 'because',
  'before', 'being', 'best', 'both', 'but', 'by', 'can', 'could', 'did', 'do', 'does', "don't", 'each', 'even',
  'every', 'finally', 'first', 'for', 'from', 'further', 'furthermore', 'good', 'great', 'had', 'has', 'have',
  'he', 'hello', 'her', 'here', "here's", 'hi', 'his', 'how', 'however', 'i', "i'm", 'if', 'in', 'instead', 'is',
  'it', "it's", 'its', 'just', 'last', 'let', "let's", 'many', 'may', 'maybe', 'more', 'moreover', 'most', 'my',
  'next', 'no', 'not', 'now', 'of', 'on', 'once', 'one', 'only', 'or', 'other', 'our', 'overall', 'please', 'remember',
  'second', 'she', 'should', 'similarly', 'since', 'so', 'some', 'still', 'such', 'thank', 'thanks', 'that',
  "that's", 'the', 'their', 'then', 'there', "there's", 'these', 'they', "they're", 'third', 'this', 'those',
  'though', 'thus', 'to', 'today', 'too', 'under', 'unlike', 'we', "we're", 'well', 'what', "what's", 'when',
  'where', 'whether', 'which', 'while', 'who', 'why', 'will', 'with', 'without', 'would', 'yes', 'yet', 'you',
  "you're", 'your',
];
