/**
 * Alternatives at one token position, as a judge reads them from its provider. OpenAI's
 * `top_logprobs` (and vLLM's, llama.cpp server's) list distinct tokens, each with its `bytes`
 * (llama.cpp server also its `id`); two of them can still print the same string (byte pieces of
 * one character both shown as U+FFFD, or two ids of one spelling). Such tokens are one answer
 * spelled two ways, so their probabilities are summed (never their log-probabilities). Entries
 * with the same identity, or with none to tell them apart, are kept as listed: the verdict reader
 * refuses a token listed twice.
 */
import type { TokenAlternative } from './types.js';

export interface ListedAlternative {
  token: string;
  /** Not checked here: the verdict reader refuses what is not a finite number at most 0. */
  logprob: number;
  /** What tells this token from another printing alike (its id, else its bytes); undefined when the provider gives neither. */
  identity?: string;
}

/** The identity of an OpenAI-shaped entry: its `id` (llama.cpp server), else its `bytes`. */
export function identityOf(entry: { id?: unknown; bytes?: unknown }): string | undefined {
  if (typeof entry.id === 'number' && Number.isInteger(entry.id)) return `id:${entry.id}`;
  if (Array.isArray(entry.bytes) && entry.bytes.every((byte) => typeof byte === 'number')) return `bytes:${entry.bytes.join(',')}`;
  return undefined;
}

/** Alternatives printing alike with distinct identities merged into one, probabilities summed, in first-listed order. */
export function mergeAlikeAlternatives(listed: readonly ListedAlternative[]): TokenAlternative[] {
  const merged: Array<TokenAlternative & { identities?: Set<string> }> = [];
  for (const entry of listed) {
    const same = entry.identity === undefined ? undefined : merged.find((kept) => kept.token === entry.token && kept.identities !== undefined && !kept.identities.has(entry.identity as string));
    if (same && entry.identity !== undefined) {
      same.logprob = Math.log(Math.exp(same.logprob) + Math.exp(entry.logprob));
      same.identities?.add(entry.identity);
      continue;
    }
    merged.push({ token: entry.token, logprob: entry.logprob, ...(entry.identity === undefined ? {} : { identities: new Set([entry.identity]) }) });
  }
  return merged.map(({ token, logprob }) => ({ token, logprob }));
}
