/**
 * Graded responses → training sets for preference optimisation and supervised fine-tuning, in
 * the shapes their consumers load:
 *   - TRL's preference datasets (DPO, ORPO, KTO read paired ones): conversational
 *     `{prompt: messages, chosen: [assistant], rejected: [assistant]}` or standard strings, and
 *     KTO's unpaired `{prompt, completion, label}`;
 *   - OpenAI's preference fine-tuning lines `{input: {messages}, preferred_output, non_preferred_output}`;
 *   - chat SFT `{messages: [...prompt, assistant]}` (TRL's SFTTrainer and OpenAI's fine-tuning
 *     alike) or TRL's `{prompt, completion}`.
 * Each row comes with the rule that made it (written beside the rows by the command).
 */
import type { Message } from '../rubric/schema.js';
import type { Candidate, LeftOut } from './candidates.js';

export type PairingRule = 'best-vs-worst' | 'best-vs-each' | 'all';
export const preferenceFormats = ['trl', 'trl-standard', 'trl-unpaired', 'openai'] as const;
export type PreferenceFormat = (typeof preferenceFormats)[number];
export const sftFormats = ['messages', 'prompt-completion'] as const;
export type SftFormat = (typeof sftFormats)[number];

/** A training row and the rule that built it. */
export interface ExportedRow {
  row: Record<string, unknown>;
  rule: Record<string, unknown>;
}

const assistant = (content: string): Message[] => [{ role: 'assistant', content }];
const cite = (candidate: Candidate) => ({ id: candidate.id, source: candidate.source, score: candidate.score });

/** The pairs a group gives under a rule: chosen strictly above rejected by at least `minMargin`. */
export function pairsOf(group: readonly Candidate[], pairing: PairingRule, minMargin: number): Array<[Candidate, Candidate]> {
  const ranked = [...group].sort((first, second) => second.score - first.score);
  const pairs: Array<[Candidate, Candidate]> = [];
  const keep = (chosen: Candidate, rejected: Candidate) => {
    // Ties are dropped: a pair with no preference teaches nothing.
    if (chosen.score > rejected.score && chosen.score - rejected.score >= minMargin) pairs.push([chosen, rejected]);
  };
  if (ranked.length < 2) return pairs;
  if (pairing === 'best-vs-worst') keep(ranked[0], ranked[ranked.length - 1]);
  else if (pairing === 'best-vs-each') for (const other of ranked.slice(1)) keep(ranked[0], other);
  else for (let first = 0; first < ranked.length; first += 1) for (let second = first + 1; second < ranked.length; second += 1) keep(ranked[first], ranked[second]);
  return pairs;
}

/** A prompt of one user message as the plain text TRL's standard format takes; undefined otherwise. */
function standardPrompt(prompt: readonly Message[]): string | undefined {
  return prompt.length === 1 && prompt[0].role === 'user' && typeof prompt[0].content === 'string' ? prompt[0].content : undefined;
}

export function preferenceRows(groups: readonly Candidate[][], options: { pairing: PairingRule; minMargin: number; format: PreferenceFormat }, leftOut: LeftOut): ExportedRow[] {
  const rows: ExportedRow[] = [];
  const unpaired = new Set<string>();
  for (const group of groups) {
    const pairs = pairsOf(group, options.pairing, options.minMargin);
    if (pairs.length === 0) leftOut.add(group.length < 2 ? 'prompt with one graded response (nothing to pair)' : `prompt whose responses are tied or closer than --min-margin ${options.minMargin}`, group.length);
    for (const [chosen, rejected] of pairs) {
      const rule = { kind: 'preference', pairing: options.pairing, min_margin: options.minMargin, margin: chosen.score - rejected.score, chosen: cite(chosen), rejected: cite(rejected) };
      const prompt = chosen.prompt;
      if (options.format === 'openai') {
        rows.push({ row: { input: { messages: prompt }, preferred_output: assistant(chosen.response), non_preferred_output: assistant(rejected.response) }, rule });
      } else if (options.format === 'trl') {
        rows.push({ row: { prompt, chosen: assistant(chosen.response), rejected: assistant(rejected.response) }, rule });
      } else if (options.format === 'trl-standard') {
        const text = standardPrompt(prompt);
        if (text === undefined) {
          leftOut.add('prompt of several messages has no standard (plain text) form: use --format trl');
          continue;
        }
        rows.push({ row: { prompt: text, chosen: chosen.response, rejected: rejected.response }, rule });
      } else {
        // KTO: each response once, desirable if it was ever chosen and never rejected.
        for (const [candidate, label] of [[chosen, true], [rejected, false]] as const) {
          if (unpaired.has(candidate.source)) continue;
          unpaired.add(candidate.source);
          rows.push({ row: { prompt, completion: assistant(candidate.response), label }, rule: { ...rule, unpaired: cite(candidate), label } });
        }
      }
    }
  }
  return rows;
}

/**
 * Rejection-sampled SFT: the responses at or above `minScore`, and/or the top `topK` of each
 * prompt (ties at the cut kept in file order).
 */
export function sftRows(groups: readonly Candidate[][], options: { minScore?: number; topK?: number; format: SftFormat }, leftOut: LeftOut): ExportedRow[] {
  const rows: ExportedRow[] = [];
  for (const group of groups) {
    const ranked = [...group].sort((first, second) => second.score - first.score);
    ranked.forEach((candidate, rank) => {
      if (options.minScore !== undefined && candidate.score < options.minScore) return leftOut.add(`score below --min-score ${options.minScore}`);
      if (options.topK !== undefined && rank >= options.topK) return leftOut.add(`not in the top ${options.topK} of its prompt`);
      const rule = { kind: 'sft', ...(options.minScore !== undefined ? { min_score: options.minScore } : {}), ...(options.topK !== undefined ? { top_k: options.topK, rank: rank + 1, of: group.length } : {}), ...cite(candidate) };
      const row = options.format === 'messages' ? { messages: [...candidate.prompt, ...assistant(candidate.response)] } : { prompt: candidate.prompt, completion: assistant(candidate.response) };
      rows.push({ row, rule });
    });
  }
  return rows;
}
