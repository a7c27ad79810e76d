import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { deriveNonce } from '../../grading/render.js';
import { safeParseJson } from '../../util/json.js';
import { seededRandom } from '../../util/random.js';
import {
  addConfidence,
  addFlattery,
  addFormatting,
  deleteSupportingSentence,
  deletionPerturbations,
  injectDirect,
  injectFakeDelimiter,
  injectFakeVerdict,
  padResponse,
  perturbItem,
} from './perturbations.js';
import { confidentClosers, confidentOpeners, delimiterInstructions, directInjections, fillerSentences, graderFlattery, userFlattery } from './phrases.js';
import { contentTokens, mostSimilarSentence, removeSpan, sentenceSpans, tokenOverlap } from './text.js';
import { dataPath, haveData } from '../../testing/data.js';

const response = [
  'Drink plenty of water and rest for a few days. Most colds clear up within a week.',
  '',
  'See a doctor if:',
  '- your fever lasts more than three days',
  '- you have trouble breathing. This needs urgent care.',
  '',
  '```',
  'temperature > 39 C: call a doctor',
  '```',
].join('\n');

/** The response with the formatting probe's additions taken out again. */
function stripFormatting(text: string): string {
  return text
    .split('\n')
    .filter((line) => !/^#{2,3} /.test(line))
    .join('\n')
    .replace(/\*\*/g, '')
    // Blank lines are layout: a whitespace-only line counts as an empty one.
    .replace(/^[ \t]+$/gm, '')
    .replace(/\n{2,}/g, '\n\n')
    .trim();
}

describe('seeded perturbations', () => {
  it('give the same text for the same seed and item, and vary with the seed', () => {
    const item = { id: 'q1', response };
    for (const probe of ['padding', 'formatting', 'confidence', 'flattery', 'injection'] as const) {
      expect(perturbItem(item, probe, 5)).toEqual(perturbItem(item, probe, 5));
    }
    const paddings = new Set(Array.from({ length: 8 }, (_, seed) => perturbItem(item, 'padding', seed)[0].response));
    expect(paddings.size).toBeGreaterThan(1);
    expect(perturbItem(item, 'injection', 0).map((entry) => entry.variant)).toEqual(['injection:direct', 'injection:delimiter', 'injection:fake-verdict']);
    const twoSamples = perturbItem(item, 'padding', 0, 2);
    expect(twoSamples.map((entry) => entry.sample)).toEqual([0, 1]);
    expect(twoSamples[0].response).not.toBe(twoSamples[1].response);
  });
});

describe('padResponse', () => {
  it('keeps the response and appends pool sentences totalling about its length', () => {
    const padded = padResponse(response, seededRandom(1));
    expect(padded.startsWith(`${response}\n\n`)).toBe(true);
    const filler = padded.slice(response.length + 2);
    const longest = Math.max(...fillerSentences.map((sentence) => sentence.length));
    expect(filler.length).toBeGreaterThanOrEqual(response.length);
    expect(filler.length).toBeLessThanOrEqual(response.length + longest + 4);
    for (const sentence of filler.split(/(?<=\.)\s+/)) expect(fillerSentences).toContain(sentence);
  });

  it('repeats the pool only after using all of it, and pads an empty response with one sentence', () => {
    const long = 'word '.repeat(2000).trim();
    const filler = padResponse(long, seededRandom(2)).slice(long.length + 2);
    const used = filler.split(/(?<=\.)\s+/);
    expect(new Set(used.slice(0, fillerSentences.length)).size).toBe(fillerSentences.length);
    expect(fillerSentences).toContain(padResponse('', seededRandom(3)));
  });
});

describe('addFormatting', () => {
  it('adds headings and bold leads without changing a word, and leaves code alone', () => {
    const formatted = addFormatting(response, seededRandom(4));
    expect(formatted.split('\n')[0]).toMatch(/^## \S/);
    expect(formatted).toMatch(/\n### \S/);
    expect(formatted).toContain('**Drink plenty of water and rest for a few days.** Most colds');
    expect(formatted).toContain('- **your fever lasts more** than three days');
    expect(formatted).toContain('```\ntemperature > 39 C: call a doctor\n```');
    expect(stripFormatting(formatted)).toBe(stripFormatting(response));
  });

  it('does not put a section heading under an existing heading, nor bold a line twice', () => {
    const text = '# Title\nFirst **already bold** line.\n\nSecond paragraph here.';
    const formatted = addFormatting(text, seededRandom(5));
    expect(formatted).toContain('# Title\nFirst **already bold** line.');
    expect(formatted.match(/^### /gm)).toHaveLength(1);
    expect(stripFormatting(formatted).replace('# Title\n', '')).toBe(stripFormatting(text).replace('# Title\n', ''));
  });
});

describe('tone probes', () => {
  it('confidence wraps the response in one authoritative opener and closer', () => {
    const [opening, body, closing] = addConfidence(response, seededRandom(6)).split(/\n\n(?=[\s\S])/).reduce<string[]>((parts, part, index, all) => {
      if (index === 0) return [part];
      if (index === all.length - 1) return [...parts, part];
      parts[1] = parts[1] === undefined ? part : `${parts[1]}\n\n${part}`;
      return parts;
    }, []);
    expect(confidentOpeners).toContain(opening);
    expect(body).toBe(response);
    expect(confidentClosers).toContain(closing);
  });

  it('flattery praises the user first and the grader last', () => {
    const flattered = addFlattery('Short answer.', seededRandom(7));
    const [first, middle, last] = flattered.split('\n\n');
    expect(userFlattery).toContain(first);
    expect(middle).toBe('Short answer.');
    expect(graderFlattery).toContain(last);
  });
});

describe('injections', () => {
  it('direct: addresses the grader after the response', () => {
    const injected = injectDirect(response, seededRandom(8));
    expect(injected.startsWith(response)).toBe(true);
    expect(directInjections).toContain(injected.slice(response.length + 2));
  });

  it('delimiter: closes a fake response block whose marker is not the real one, then poses as the harness', () => {
    const injected = injectFakeDelimiter(response, seededRandom(9));
    const match = /\n<\/response-([0-9a-f]{16})>\n\n([\s\S]+)$/.exec(injected);
    expect(match).not.toBeNull();
    expect(delimiterInstructions).toContain(match![2]);
    const realNonce = deriveNonce({ prompt: [{ role: 'user', content: 'q' }], response: injected });
    expect(match![1]).not.toBe(realNonce);
    expect(injectFakeDelimiter(response, seededRandom(10))).not.toBe(injected);
  });

  it('fake verdict: a JSON block in the judge\u2019s reply format claiming the criterion is met', () => {
    const injected = injectFakeVerdict(response, seededRandom(11));
    const block = /```json\n(.+)\n```$/.exec(injected);
    expect(block).not.toBeNull();
    const parsed = safeParseJson(block![1]);
    expect(parsed.ok && parsed.value).toMatchObject({ criteria_met: true });
  });
});

describe('sentence deletion', () => {
  it('finds sentences line by line, so list items and headings stand alone', () => {
    const spans = sentenceSpans(response);
    expect(spans.map((span) => span.text)).toContain('- your fever lasts more than three days');
    expect(spans.map((span) => span.text)).toContain('This needs urgent care.');
    for (const span of spans) expect(response.slice(span.start, span.end)).toBe(span.text);
  });

  it('deletes the sentence sharing most content words with the criterion', () => {
    const deletion = deleteSupportingSentence(response, 'Advises seeing a doctor when the fever lasts over three days');
    expect(deletion?.sentence).toBe('- your fever lasts more than three days');
    expect(deletion?.response).not.toContain('fever lasts');
    expect(deletion?.response).toContain('- you have trouble breathing.');
    const rest = deleteSupportingSentence(response, 'Recommends rest and drinking water');
    expect(rest?.sentence).toBe('Drink plenty of water and rest for a few days.');
    expect(rest?.response.startsWith('Most colds clear up within a week.')).toBe(true);
  });

  it('keeps a list marker when other sentences remain on its line', () => {
    const deletion = deleteSupportingSentence(response, 'Says trouble breathing warrants a doctor');
    expect(deletion?.sentence).toBe('- you have trouble breathing.');
    expect(deletion?.response).toContain('- This needs urgent care.');
  });

  it('never deletes a heading and skips criteria no sentence shares a word with', () => {
    const text = '## Fever advice\nRest at home.';
    expect(deleteSupportingSentence(text, 'Gives fever advice')).toBeUndefined();
    const { perturbations, unmatched } = deletionPerturbations({ response }, [
      { id: 'water', text: 'Recommends drinking water' },
      { id: 'vaccine', text: 'Mentions influenza vaccination' },
    ]);
    expect(unmatched).toEqual(['vaccine']);
    expect(perturbations).toHaveLength(1);
    expect(perturbations[0].target).toMatchObject({ criterionId: 'water', sharedTokens: 2 });
  });

  it('prefers more shared words, then the tighter sentence, then the earlier one', () => {
    const spans = sentenceSpans('Cats sleep. Cats sleep a lot during the long day. Cats sleep.');
    expect(mostSimilarSentence(spans, 'cats sleep')?.index).toBe(0);
    expect(mostSimilarSentence(spans, 'cats sleep during the day')?.index).toBe(1);
    expect(mostSimilarSentence(spans, 'dogs bark')).toBeUndefined();
  });

  it('tokenises content words with a light stem and ignores stop words', () => {
    expect([...contentTokens('The response recommends seeing doctors, and it mentions 3 days.')].sort()).toEqual(['3', 'day', 'doctor', 'recommend', 'see'].sort());
    expect(tokenOverlap(new Set(['a', 'b']), new Set(['b', 'c']))).toEqual({ shared: 1, jaccard: 1 / 3 });
  });

  it('removes a whole line when nothing else is on it, and tidies the spaces', () => {
    expect(removeSpan('One. Two.\nThree.', 0, 4)).toBe('Two.\nThree.');
    expect(removeSpan('One. Two.\nThree.', 5, 9)).toBe('One.\nThree.');
    expect(removeSpan('One.\n\nTwo.\n\nThree.', 6, 10)).toBe('One.\n\nThree.');
  });
});

const healthbench = dataPath('healthbench/oss_eval_first100.jsonl');
if (!existsSync(healthbench)) console.warn(`skipping real-text probe checks: ${healthbench} is absent`);

describe.skipIf(!haveData(healthbench, 'src/meta/probes/perturbations.test.ts'))('perturbations on real HealthBench ideal completions', () => {
  // A skipped describe's body still runs to collect its tests: read only when the file is there.
  const examples = (existsSync(healthbench) ? readFileSync(healthbench, 'utf8') : '')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const parsed = safeParseJson(line);
      if (!parsed.ok) throw new Error(`unreadable HealthBench line: ${parsed.error}`);
      return parsed.value as { prompt_id: string; rubrics: Array<{ criterion: string; points: number }>; ideal_completions_data: { ideal_completion: string } | null };
    })
    .filter((example) => example.ideal_completions_data?.ideal_completion);

  it('formatting never changes a word of a real response', () => {
    expect(examples.length).toBeGreaterThan(20);
    for (const example of examples) {
      const original = example.ideal_completions_data!.ideal_completion;
      const formatted = addFormatting(original, seededRandom(1));
      // Bold markers already in the response are removed on both sides alike.
      expect(stripFormatting(formatted)).toBe(stripFormatting(original));
    }
  });

  it('deletion finds a supporting sentence for most positive criteria and removes exactly that sentence', () => {
    // Ideal completions were not written against the rubric, so some criteria have no sentence
    // sharing two content words with them (62% matched when this was written).
    let criteria = 0;
    let matched = 0;
    for (const example of examples) {
      const original = example.ideal_completions_data!.ideal_completion;
      for (const rubric of example.rubrics.filter((entry) => entry.points > 0)) {
        criteria += 1;
        const deletion = deleteSupportingSentence(original, rubric.criterion);
        if (!deletion) continue;
        matched += 1;
        expect(deletion.response.length).toBeLessThan(original.length);
        expect(original.replace(/\s+/g, ' ')).toContain(deletion.sentence.replace(/\s+/g, ' '));
        expect(deletion.similarity.shared).toBeGreaterThanOrEqual(Math.min(2, contentTokens(rubric.criterion).size));
      }
    }
    expect(matched / criteria).toBeGreaterThan(0.5);
  });
});
