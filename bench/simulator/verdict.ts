/**
 * The simulated judge's opinions: deterministic in (criterion, response), about half met, so
 * every grader run against the simulator can be checked verdict by verdict.
 */
import { createHash } from 'node:crypto';
import { seededRandom } from '../../src/util/random.js';

interface Opinion {
  met: boolean;
  /** 32-bit seed for the explanation's words. */
  seed: number;
}

function opinion(criterion: string, response: string): Opinion {
  // Surrounding whitespace is framing (templates add newlines around texts), not content.
  const digest = createHash('sha256').update(criterion.trim()).update('\u0000').update(response.trim()).digest();
  return { met: (digest[0] & 1) === 1, seed: digest.readUInt32LE(4) };
}

/** Whether the simulated judge says `response` meets `criterion` (sha256 bit; leading/trailing whitespace ignored). */
export function simulatedVerdict(criterion: string, response: string): boolean {
  return opinion(criterion, response).met;
}

const fillerWords = [
  'the', 'response', 'criterion', 'states', 'clearly', 'mentions', 'explains', 'recommends', 'patient', 'user',
  'because', 'while', 'which', 'specific', 'detail', 'advice', 'answer', 'includes', 'omits', 'relevant',
  'information', 'about', 'risk', 'symptoms', 'treatment', 'should', 'would', 'also', 'does', 'not',
  'address', 'question', 'context', 'accurate', 'appropriate', 'guidance', 'safety', 'follow', 'up', 'with',
  'a', 'an', 'and', 'in', 'of', 'to', 'that', 'this', 'it', 'is',
];

/**
 * A judge-like explanation of exactly `words` words (empty for 0), derived from
 * the same hash as the verdict so replies are reproducible.
 */
export function simulatedExplanation(criterion: string, response: string, words: number): { met: boolean; explanation: string } {
  const { met, seed } = opinion(criterion, response);
  const lead = met ? ['The', 'response', 'meets', 'the', 'criterion:'] : ['The', 'response', 'does', 'not', 'meet', 'the', 'criterion:'];
  const random = seededRandom(seed);
  if (words <= 0) return { met, explanation: '' };
  const parts = lead.slice(0, Math.min(lead.length, words));
  while (parts.length < words) parts.push(fillerWords[Math.floor(random() * fillerWords.length)]);
  return { met, explanation: `${parts.join(' ')}.` };
}
