/**
 * Token counting for the judge simulator with the real o200k_base BPE (gpt-tokenizer).
 *
 * The simulator sees the same long texts (grader instructions, the graded response) again
 * and again, once per criterion, so tokenising every request from scratch would make the
 * simulator itself a CPU bottleneck. Texts are cut into chunks at boundaries where the
 * o200k pre-tokeniser always splits, and each distinct chunk is encoded once and memoised;
 * the concatenation of chunk encodings is then exactly the encoding of the whole text.
 */
import { encode } from 'gpt-tokenizer/encoding/o200k_base';

/**
 * Chat framing, as OpenAI's token-counting guide describes it for the gpt-4o family: each
 * message costs its content plus 3 tokens (start marker, role, end marker), and the reply is
 * primed with 3 more (start marker, `assistant`, message marker). The ids are o200k_harmony's
 * markers; only their stability matters, because they take part in prefix-cache matching.
 */
const startMarker = 200006;
const endMarker = 200007;
const messageMarker = 200008;

// Treat special-token text such as `<|endoftext|>` inside a message as plain text, as an API does.
const plainTextOptions = { disallowedSpecial: new Set<string>() };

/** Upper bound on memoised chunks; when exceeded the oldest half is dropped. */
const maximumMemoisedChunks = 200_000;
const chunkTokens = new Map<string, readonly number[]>();
const roleTokens = new Map<string, number>();


/** Plain o200k_base encoding of a whole text, without memoisation (tests compare against it). */
export function encodeText(text: string): number[] {
  return encode(text, plainTextOptions);
}

/**
 * Start offsets of chunks: a cut is made after a line break when the next character is neither
 * whitespace nor `/`. No o200k pre-token can span such a point (word pre-tokens never start
 * with a line break, and the only pattern that continues after one is punctuation followed by
 * line breaks or slashes), so encoding chunk by chunk gives the same tokens as encoding the
 * whole text.
 */
export function chunkBoundaries(text: string): number[] {
  const starts = [0];
  let index = text.indexOf('\n');
  while (index !== -1 && index + 1 < text.length) {
    const next = text.charCodeAt(index + 1);
    // 0x20 space, 0x09 tab, 0x0a/0x0d line breaks, 0x0b/0x0c other ASCII spaces, 0x2f '/'.
    const splittable = next !== 0x20 && next !== 0x09 && next !== 0x0a && next !== 0x0d && next !== 0x0b && next !== 0x0c && next !== 0x2f && !isUnicodeSpace(next);
    if (splittable) starts.push(index + 1);
    index = text.indexOf('\n', index + 1);
  }
  return starts;
}

function isUnicodeSpace(code: number): boolean {
  if (code < 0x80) return false;
  return /\s/.test(String.fromCharCode(code));
}

function encodeChunk(chunk: string): readonly number[] {
  const known = chunkTokens.get(chunk);
  if (known) {
    return known;
  }
  const tokens = encode(chunk, plainTextOptions);
  if (chunkTokens.size >= maximumMemoisedChunks) dropOldestHalf();
  chunkTokens.set(chunk, tokens);
  return tokens;
}

function dropOldestHalf(): void {
  let toDrop = Math.floor(chunkTokens.size / 2);
  for (const key of chunkTokens.keys()) {
    if (toDrop-- <= 0) break;
    chunkTokens.delete(key);
  }
}

/** Appends the o200k tokens of `text` to `into`, using the chunk memo. */
export function appendTextTokens(text: string, into: number[]): void {
  const starts = chunkBoundaries(text);
  for (let position = 0; position < starts.length; position += 1) {
    const end = position + 1 < starts.length ? starts[position + 1] : text.length;
    const tokens = encodeChunk(text.slice(starts[position], end));
    for (let index = 0; index < tokens.length; index += 1) into.push(tokens[index]);
  }
}

/** Number of o200k tokens in `text` (memoised by chunk). */
export function countTextTokens(text: string): number {
  const starts = chunkBoundaries(text);
  let total = 0;
  for (let position = 0; position < starts.length; position += 1) {
    const end = position + 1 < starts.length ? starts[position + 1] : text.length;
    total += encodeChunk(text.slice(starts[position], end)).length;
  }
  return total;
}

function roleToken(role: string): number {
  let token = roleTokens.get(role);
  if (token === undefined) {
    // Roles are single tokens in o200k; an unusual role name keeps only its first token so the
    // framing stays at three tokens per message.
    token = encode(role, plainTextOptions)[0] ?? 0;
    roleTokens.set(role, token);
  }
  return token;
}

export interface TextMessage {
  role: string;
  content: string;
}

/**
 * The prompt as the token sequence a server would see: per message `start role content end`,
 * then `start assistant message` to prime the reply. Its length is the reported prompt_tokens.
 */
export function encodeChatPrompt(messages: readonly TextMessage[]): number[] {
  const tokens: number[] = [];
  for (const message of messages) {
    tokens.push(startMarker, roleToken(message.role));
    appendTextTokens(message.content, tokens);
    tokens.push(endMarker);
  }
  tokens.push(startMarker, roleToken('assistant'), messageMarker);
  return tokens;
}
