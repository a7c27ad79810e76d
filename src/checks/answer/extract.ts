/**
 * Finding the final answer in a response: the last `\boxed{…}` (or `\fbox{…}`), the last
 * `Answer:` line, the last number, or the first group of a regular expression. Only the tail
 * of a long response is searched (`searchedCharacters`): the final answer is at its end, and
 * the work stays bounded whatever the response's length.
 */
export type AnswerExtraction = 'boxed' | 'answer-line' | 'last-number' | { regex: string; flags?: string };

export const searchedCharacters = 20_000;
/** A rubric's own regular expression runs on less: its cost depends on a pattern we did not write. */
export const regexSearchedCharacters = 4_000;

function tail(response: string): string {
  return response.length > searchedCharacters ? response.slice(-searchedCharacters) : response;
}

/** The content of the last `\boxed{…}` with its braces balanced, or undefined. */
function lastBoxed(text: string): string | undefined {
  const pattern = /\\(?:boxed|fbox)\s*\{/g;
  let start = -1;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) start = match.index + match[0].length;
  if (start === -1) return undefined;
  let depth = 1;
  for (let index = start; index < text.length; index += 1) {
    const character = text[index];
    if (character === '\\') {
      index += 1;
      continue;
    }
    if (character === '{') depth += 1;
    else if (character === '}') {
      depth -= 1;
      if (depth === 0) return text.slice(start, index).trim();
    }
  }
  return undefined;
}

/** The rest of the last line that gives the answer (`Answer: …`, `The final answer is …`). */
function lastAnswerLine(text: string): string | undefined {
  const pattern = /(?:final\s+)?answer\s*(?:is\s*)?[:：]?[ \t]*([^\n]+)/gi;
  let found: string | undefined;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) found = match[1];
  if (found === undefined) return undefined;
  let answer = found.trim().replace(/^the\s+final\s+answer\s+is\s*/i, '');
  // "$28 \%$. I hope it is correct." → the first math span, else the sentence.
  const math = /\$([^$]+)\$|\\\((.+?)\\\)/.exec(answer);
  if (math) answer = math[1] ?? math[2];
  else answer = answer.replace(/\.(?:\s.*)?$/, '');
  answer = answer.trim();
  return answer === '' ? undefined : answer;
}

const numberPattern = /-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\/\d+)?\s*%?|-?\.\d+/g;

function lastNumber(text: string): string | undefined {
  let found: string | undefined;
  for (const match of text.matchAll(numberPattern)) found = match[0];
  return found?.trim();
}

export function extractAnswer(response: string, extraction: AnswerExtraction, compiled?: RegExp): string | undefined {
  const text = tail(response);
  if (extraction === 'boxed') return lastBoxed(text);
  if (extraction === 'answer-line') return lastAnswerLine(text);
  if (extraction === 'last-number') return lastNumber(text);
  const pattern = compiled ?? new RegExp(extraction.regex, extraction.flags ?? '');
  const match = pattern.exec(text.slice(-regexSearchedCharacters));
  if (!match) return undefined;
  const answer = (match[1] ?? match[0]).trim();
  return answer === '' ? undefined : answer;
}
