/**
 * A scripted rubric generator and judge for the `generate` and `refine` CLI tests, behind the
 * loopback fakes: answers of a realistic size that depend only on the request, and usage as an
 * OpenAI server reports it (prompt tokens by o200k with chat framing, the reply's own tokens).
 * Criteria name a word in double quotes, and the judge finds them met when the response holds
 * that word, so verdicts, and whether a contrastive rubric orders its pair, follow the texts.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { tokenizerFor } from '../src/batch/dry-run.js';
import { answer, fencedBlocks, keywordMet, taskOf, type FakeCriterion } from '../src/generation/fixtures/fake-generator.js';
import { binaryVerdict, type FakeJudgeAction, type FakeJudgeRequest } from '../src/testing/fake-judge.js';

const tokenizer = tokenizerFor('gpt-4.1');

const vocabulary = (
  'accurate advice allergy answer balanced brief caution clear concise correct current dosage doctor evidence example explains fluids follow-up general guidance ' +
  'hydration infection likely limits medical mentions mild monitor names notes options pain practical prompt reasons recommends referral rest risks safe ' +
  'severe signs simple source specific states steps suggests symptoms timeline treatment urgent warns'
).split(' ');

function hashOf(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** `count` criteria, each naming one of `keywords` (cycled) in quotes, of 8 to 24 words (16 on average). */
export function scriptedCriteria(seed: string, count: number, keywords: readonly string[]): FakeCriterion[] {
  const importances: FakeCriterion['importance'][] = ['Essential', 'Important', 'Important', 'Optional', 'Pitfall'];
  return Array.from({ length: count }, (_, index) => {
    const hash = hashOf(`${seed}\u0000${index}`);
    const words = Array.from({ length: 6 + (hash[0] % 17) }, (_, position) => vocabulary[hash[(position + 1) % hash.length] % vocabulary.length]);
    const keyword = keywords[index % keywords.length] ?? 'answer';
    return { text: `The response mentions "${keyword}" and ${words.join(' ')}.`, importance: importances[hash[2] % importances.length], kind: 'principle', check: null };
  });
}

/** Bounds of the criteria array the request's schema asks for. */
function criteriaBounds(request: FakeJudgeRequest): { min: number; max: number } {
  const schema = (request.body.response_format as { json_schema?: { schema?: { properties?: { criteria?: { minItems?: number; maxItems?: number } } } } } | undefined)?.json_schema?.schema;
  const criteria = schema?.properties?.criteria;
  return { min: criteria?.minItems ?? 1, max: criteria?.maxItems ?? 20 };
}

function wordsOf(text: string): string[] {
  return [...new Set(text.toLowerCase().match(/[a-z]{4,}/g) ?? [])];
}

/** With usage as a server counts it. */
function reply(request: FakeJudgeRequest, content: string | Record<string, unknown>): FakeJudgeAction {
  const text = typeof content === 'string' ? content : JSON.stringify(content);
  const promptTokens = request.messages.reduce((total, message) => total + 3 + tokenizer.count(message.content), 3);
  return { content: text, usage: { prompt_tokens: promptTokens, completion_tokens: tokenizer.count(text) } };
}

export interface ScriptOptions {
  /** Criteria a generated rubric has: this many, or (absent) a number drawn between the schema's bounds. */
  criteria?: number;
}

/** The scripted model: generation, contrastive and refinement answers, sampled responses, and per-criterion verdicts. */
export function generationScript(options: ScriptOptions = {}): (request: FakeJudgeRequest) => FakeJudgeAction {
  return (request) => {
    const task = taskOf(request);
    if (task === 'grade') {
      // An explanation of 10 to 40 words, as judges write.
      const hash = hashOf(request.userText);
      const explanation = Array.from({ length: 10 + (hash[0] % 31) }, (_, position) => vocabulary[hash[(position + 1) % hash.length] % vocabulary.length]).join(' ');
      return reply(request, binaryVerdict(keywordMet(request), `The response ${explanation}.`));
    }
    if (task === 'respond') return reply(request, `A sampled answer ${hashOf(request.userText).toString('hex').slice(0, 8)}: rest, fluids and a doctor if it gets worse.`);
    const bounds = criteriaBounds(request);
    const count = options.criteria ?? bounds.min + (hashOf(request.userText)[0] % (bounds.max - bounds.min + 1));
    const request_ = fencedBlocks(request, 'request')[0] ?? request.userText;
    // Keywords: from the preferred response (contrastive), from the better of the two shown (refine), else from the request.
    const source = task === 'contrastive' ? fencedBlocks(request, 'preferred')[0] : task === 'refine' ? fencedBlocks(request, 'response-1')[0] : request_;
    return reply(request, answer(scriptedCriteria(request.userText, count, wordsOf(source ?? request_))));
  };
}

/** Prompts JSONL of `count` health questions of varied length. */
export function writePrompts(path: string, count: number): void {
  const lines = Array.from({ length: count }, (_, index) => {
    const extra = Array.from({ length: index % 7 }, (_, position) => vocabulary[(index * 7 + position) % vocabulary.length]).join(' ');
    return JSON.stringify({ id: `q${index}`, prompt: `Question ${index}: I have had a mild fever and a sore throat for ${index % 5 + 1} days. What should I do? ${extra}`.trim() });
  });
  writeFileSync(path, `${lines.join('\n')}\n`);
}
