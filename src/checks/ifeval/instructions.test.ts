import { describe, expect, it } from 'vitest';
import { runCheck } from '../registry.js';
import type { CheckMode } from '../types.js';

function follows(type: string, parameters: Record<string, unknown>, response: string, mode: CheckMode = 'strict', prompt = ''): boolean {
  return runCheck({ type, ...parameters }, response, { prompt, mode }).passed;
}

describe('keywords', () => {
  it('existence: every keyword, case-insensitive, substrings count', () => {
    const parameters = { keywords: ['Correlated', 'experience'] };
    expect(follows('keywords:existence', parameters, 'They are CORRELATED with our experiences.')).toBe(true);
    expect(follows('keywords:existence', parameters, 'They are correlated.')).toBe(false);
  });

  it('frequency: counts non-overlapping, case-insensitive occurrences', () => {
    const text = 'War and peace. WAR again; warfare is war.';
    expect(follows('keywords:frequency', { keyword: 'war', frequency: 4, relation: 'at least' }, text)).toBe(true);
    expect(follows('keywords:frequency', { keyword: 'war', frequency: 5, relation: 'at least' }, text)).toBe(false);
    expect(follows('keywords:frequency', { keyword: 'peace', frequency: 2, relation: 'less than' }, text)).toBe(true);
  });

  it('forbidden_words: whole words only, case-insensitive', () => {
    const parameters = { forbidden_words: ['rock', 'check'] };
    expect(follows('keywords:forbidden_words', parameters, 'We ROCKED the checklist.')).toBe(true);
    expect(follows('keywords:forbidden_words', parameters, 'Let us Rock!')).toBe(false);
    expect(follows('keywords:forbidden_words', { forbidden_words: ['café'] }, 'Un cafés.')).toBe(true);
    expect(follows('keywords:forbidden_words', { forbidden_words: ['café'] }, 'Un café.')).toBe(false);
  });

  it('letter_frequency: counts one character in the lowercased text, including non-letters as the current IFEval does', () => {
    expect(follows('keywords:letter_frequency', { letter: 'Q', let_frequency: 2, let_relation: 'at least' }, 'Quick quiz')).toBe(true);
    expect(follows('keywords:letter_frequency', { letter: 'q', let_frequency: 2, let_relation: 'less than' }, 'Quick quiz')).toBe(false);
    expect(follows('keywords:letter_frequency', { letter: '#', let_frequency: 2, let_relation: 'at least' }, '#one #two')).toBe(true);
  });
});

describe('language', () => {
  it('response_language: compares the langdetect answer with the code', () => {
    const french = "Nous sommes allés au marché ce matin pour acheter des légumes frais et du pain.";
    expect(follows('language:response_language', { language: 'fr' }, french)).toBe(true);
    expect(follows('language:response_language', { language: 'en' }, french)).toBe(false);
  });

  it('response_language: text with nothing to detect counts as followed, as in IFEval', () => {
    expect(follows('language:response_language', { language: 'ja' }, '1234 5678')).toBe(true);
  });
});

describe('length constraints', () => {
  it('number_sentences: less than / at least', () => {
    const text = 'One. Two! Three? Four.';
    expect(follows('length_constraints:number_sentences', { num_sentences: 4, relation: 'at least' }, text)).toBe(true);
    expect(follows('length_constraints:number_sentences', { num_sentences: 4, relation: 'less than' }, text)).toBe(false);
    expect(follows('length_constraints:number_sentences', { num_sentences: 5, relation: 'less than' }, text)).toBe(true);
  });

  it('number_words: \\w+ runs, so contractions and decimals split', () => {
    const text = "It's 3.5 miles."; // It, s, 3, 5, miles
    expect(follows('length_constraints:number_words', { num_words: 5, relation: 'at least' }, text)).toBe(true);
    expect(follows('length_constraints:number_words', { num_words: 6, relation: 'at least' }, text)).toBe(false);
    expect(follows('length_constraints:number_words', { num_words: 6, relation: 'less than' }, text)).toBe(true);
  });

  it('number_paragraphs: *** dividers, empty edge paragraphs ignored, empty inner paragraph fails', () => {
    const check = (text: string, count: number) => follows('length_constraints:number_paragraphs', { num_paragraphs: count }, text);
    expect(check('first\n***\nsecond\n***\nthird', 3)).toBe(true);
    expect(check('\n  ***\nfirst\n  ***\n  second\n  ***\n  third', 3)).toBe(true);
    expect(check('first\n  ***\n  second\n  ***\n  third\n  ***', 3)).toBe(true);
    expect(check('first\n  ***\n  second\n  ***\n  ***', 2)).toBe(false);
    expect(check('first\n***\nsecond', 3)).toBe(false);
  });

  it('nth_paragraph_first_word: blank-line paragraphs, count must match, first word lowercased without quotes or punctuation', () => {
    const parameters = { num_paragraphs: 3, nth_paragraph: 2, first_word: 'Booster' };
    expect(follows('length_constraints:nth_paragraph_first_word', parameters, 'Intro.\n\n"Booster," he said.\n\nEnd.')).toBe(true);
    expect(follows('length_constraints:nth_paragraph_first_word', parameters, 'Intro.\n\nBoosters help.\n\nEnd.')).toBe(false);
    expect(follows('length_constraints:nth_paragraph_first_word', parameters, 'Intro.\n\nBooster here.')).toBe(false);
    expect(follows('length_constraints:nth_paragraph_first_word', { num_paragraphs: 2, nth_paragraph: 1, first_word: 'hi' }, 'hi there\n\n\n\nbye')).toBe(true);
  });
});

describe('detectable content', () => {
  it('number_placeholders: square-bracket placeholders on one line', () => {
    const template = 'Dear [Name],\nYour order [Order ID] ships to [Address].\nRegards, [Sender]';
    expect(follows('detectable_content:number_placeholders', { num_placeholders: 4 }, template)).toBe(true);
    expect(follows('detectable_content:number_placeholders', { num_placeholders: 5 }, template)).toBe(false);
    expect(follows('detectable_content:number_placeholders', { num_placeholders: 1 }, 'An [open\nbracket]')).toBe(false);
  });

  it('postscript: P.S. and P.P.S matched with optional spaces, anywhere on a line', () => {
    expect(follows('detectable_content:postscript', { postscript_marker: 'P.S.' }, 'Thanks.\n\nP.S. See you soon.')).toBe(true);
    expect(follows('detectable_content:postscript', { postscript_marker: 'P.S.' }, 'Done (inline) p. s. one more thing')).toBe(true);
    expect(follows('detectable_content:postscript', { postscript_marker: 'P.P.S' }, 'Bye.\np.p.s lowercase works')).toBe(true);
    expect(follows('detectable_content:postscript', { postscript_marker: 'P.P.S' }, 'Bye.\nP.S. not enough')).toBe(false);
    expect(follows('detectable_content:postscript', { postscript_marker: 'PS:' }, 'Bye.\nP.S. wrong marker')).toBe(false);
  });
});

describe('detectable format', () => {
  it('number_bullet_lists: lines starting with * (not **) or -, exact count', () => {
    const text = 'Intro with an inline * star.\n* one\n*two\n  - three\n-four\n**bold line**\nend';
    expect(follows('detectable_format:number_bullet_lists', { num_bullets: 4 }, text)).toBe(true);
    expect(follows('detectable_format:number_bullet_lists', { num_bullets: 3 }, text)).toBe(false);
  });

  it('constrained_response: one of the three fixed answers anywhere in the response', () => {
    expect(follows('detectable_format:constrained_response', {}, '\n My answer is no.\n')).toBe(true);
    expect(follows('detectable_format:constrained_response', {}, 'My answer is maybe. Explanation follows.')).toBe(true);
    expect(follows('detectable_format:constrained_response', {}, 'My answer is Yes.')).toBe(false);
  });

  it('number_highlighted_sections: *x* and **x** spans on one line, empty ones ignored', () => {
    const check = (text: string, count: number) => follows('detectable_format:number_highlighted_sections', { num_highlights: count }, text);
    expect(check('Two *one* and *two* on a line.', 2)).toBe(true);
    expect(check('Only **bold** here', 1)).toBe(true);
    expect(check('Only **bold** here', 2)).toBe(false);
    expect(check('A *broken\nhighlight and ** ** empty', 1)).toBe(false);
    // IFEval's pattern also pairs a closing star with the next opening one on the line.
    expect(check('A *broken\nhighlight* and ** ** empty', 1)).toBe(true);
  });

  it('multiple_sections: splitter word plus a number', () => {
    const text = 'SECTION 1\nfirst\nSECTION 2\nsecond';
    expect(follows('detectable_format:multiple_sections', { section_spliter: 'SECTION', num_sections: 2 }, text)).toBe(true);
    expect(follows('detectable_format:multiple_sections', { section_spliter: 'SECTION', num_sections: 3 }, text)).toBe(false);
    expect(follows('detectable_format:multiple_sections', { section_spliter: 'Section', num_sections: 1 }, 'SECTION 1 only')).toBe(false);
    expect(follows('detectable_format:multiple_sections', { section_spliter: 'Section', num_sections: 2 }, 'Section I\nSection II')).toBe(false);
  });

  it('json_format: whole response JSON, optional fences, Python also accepts NaN', () => {
    expect(follows('detectable_format:json_format', {}, '```json\n{"a": [1, 2]}\n```')).toBe(true);
    expect(follows('detectable_format:json_format', {}, '  ```\n[true, null]\n```  ')).toBe(true);
    expect(follows('detectable_format:json_format', {}, '{"score": NaN}')).toBe(true);
    expect(follows('detectable_format:json_format', {}, 'Here it is: {"a": 1}')).toBe(false);
    expect(follows('detectable_format:json_format', {}, '{"a": 1,}')).toBe(false);
  });

  it('title: non-empty <<title>> on one line', () => {
    expect(follows('detectable_format:title', {}, '<<Poem of Joy>>\nLines')).toBe(true);
    expect(follows('detectable_format:title', {}, '<<   >> and <<a\nb>>')).toBe(false);
  });
});

describe('combination', () => {
  it('two_responses: exactly two different non-empty parts separated by ******', () => {
    expect(follows('combination:two_responses', {}, 'First answer.\n******\nSecond answer.')).toBe(true);
    expect(follows('combination:two_responses', {}, 'Same.\n******\nSame.')).toBe(false);
    expect(follows('combination:two_responses', {}, 'One\n******\n\n******\nTwo')).toBe(false);
    expect(follows('combination:two_responses', {}, '******\nOne\n******\nTwo\n******')).toBe(true);
  });

  it('repeat_prompt: the response starts with the request, case-insensitive after stripping', () => {
    const parameters = { prompt_to_repeat: 'Write a haiku about rain.' };
    expect(follows('combination:repeat_prompt', parameters, '  write a HAIKU about rain. Drops fall...')).toBe(true);
    expect(follows('combination:repeat_prompt', parameters, 'Sure! Write a haiku about rain.')).toBe(false);
  });

  it('repeat_prompt: without prompt_to_repeat the item prompt is used', () => {
    expect(follows('combination:repeat_prompt', {}, 'Name a color. Blue.', 'strict', 'Name a color.')).toBe(true);
    expect(follows('combination:repeat_prompt', {}, 'Blue.', 'strict', '')).toBe(false);
  });
});

describe('start and end', () => {
  it('end_checker: ends with the phrase, ignoring case, whitespace and wrapping quotes', () => {
    const parameters = { end_phrase: 'Is there anything else I can help with?' };
    expect(follows('startend:end_checker', parameters, 'Done. is there anything else I can help with?"  ')).toBe(true);
    expect(follows('startend:end_checker', parameters, 'Is there anything else I can help with? Bye')).toBe(false);
  });

  it('quotation: wrapped in double quotes after stripping', () => {
    expect(follows('startend:quotation', {}, '  "Hello there."\n')).toBe(true);
    expect(follows('startend:quotation', {}, '"')).toBe(false);
    expect(follows('startend:quotation', {}, '“Curly quotes”')).toBe(false);
  });
});

describe('change case', () => {
  it('capital_word_frequency: counts all-capital NLTK tokens', () => {
    const text = "I DON'T LIKE IT."; // I, DO, N'T, LIKE, IT → 5
    expect(follows('change_case:capital_word_frequency', { capital_frequency: 5, capital_relation: 'at least' }, text)).toBe(true);
    expect(follows('change_case:capital_word_frequency', { capital_frequency: 6, capital_relation: 'at least' }, text)).toBe(false);
    expect(follows('change_case:capital_word_frequency', { capital_frequency: 6, capital_relation: 'less than' }, text)).toBe(true);
  });

  it('english_capital and english_lowercase: case and detected language', () => {
    const upper = 'THE WEATHER TODAY IS SUNNY AND WARM, SO WE WILL GO TO THE BEACH WITH OUR FRIENDS.';
    expect(follows('change_case:english_capital', {}, upper)).toBe(true);
    expect(follows('change_case:english_capital', {}, 'THE WEATHER is sunny.')).toBe(false);
    const lower = 'the weather today is sunny and warm, so we will go to the beach with our friends.';
    expect(follows('change_case:english_lowercase', {}, lower)).toBe(true);
    expect(follows('change_case:english_lowercase', {}, 'hello from Paris.')).toBe(false);
    expect(follows('change_case:english_lowercase', {}, 'le temps est beau et nous allons à la plage avec nos amis.')).toBe(false);
  });
});

describe('punctuation', () => {
  it('no_comma', () => {
    expect(follows('punctuation:no_comma', {}, 'No commas here.')).toBe(true);
    expect(follows('punctuation:no_comma', {}, 'One, two.')).toBe(false);
  });
});

describe('IFEval evaluation rules', () => {
  it('an empty or whitespace response never follows an instruction, even one it trivially satisfies', () => {
    expect(follows('punctuation:no_comma', {}, '   \n')).toBe(false);
    expect(follows('punctuation:no_comma', {}, '   \n', 'loose')).toBe(false);
  });

  it('loose mode accepts a response once a leading line is dropped', () => {
    const response = 'Sure, here you go:\n"The whole answer in quotes."';
    expect(follows('startend:quotation', {}, response, 'strict')).toBe(false);
    expect(follows('startend:quotation', {}, response, 'loose')).toBe(true);
  });

  it('loose mode accepts a response once a trailing line is dropped', () => {
    const response = 'First answer.\n******\nSecond answer.\nHope this helps, friend.';
    expect(follows('punctuation:no_comma', {}, response, 'strict')).toBe(false);
    expect(follows('punctuation:no_comma', {}, response, 'loose')).toBe(true);
  });

  it('loose mode accepts a response once asterisks are removed', () => {
    const response = '**Title**\n* note';
    const parameters = { postscript_marker: 'P.S.' };
    expect(follows('detectable_format:number_bullet_lists', { num_bullets: 0 }, response, 'strict')).toBe(false);
    expect(follows('detectable_format:number_bullet_lists', { num_bullets: 0 }, response, 'loose')).toBe(true);
    expect(follows('detectable_content:postscript', parameters, response, 'loose')).toBe(false);
  });

  it('loose mode explains which variant passed', () => {
    const outcome = runCheck({ type: 'startend:quotation' }, 'Intro line\n"Quoted."', { prompt: '', mode: 'loose' });
    expect(outcome.passed).toBe(true);
    expect(outcome.detail).toContain('without its first line');
  });
});
