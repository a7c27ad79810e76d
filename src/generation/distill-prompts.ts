/**
 * The templates of query-agnostic distillation (`generate --distill`): propose general criteria
 * from many prompts' rubrics, revise the ones that pick the wrong response of labelled pairs, and
 * harden the set with stricter criteria that separate two strong answers. Versions are in
 * `promptVersions` (`distill-propose/v1`, `distill-revise/v1`, `distill-harden/v1`). Everything
 * quoted from the data (requests, responses, criteria) is fenced, as in every generation prompt.
 */
import type { ChatMessage } from '../judges/types.js';
import type { Message } from '../rubric/schema.js';
import { checksSection, dataNotice, fence, fenceNonce, pointsLine, renderConversation, replyFormat, type RubricPromptContext } from './prompts.js';

/** Longest request or response text shown (characters): the prompt stays bounded whatever the data. */
export const shownTextLimit = 2000;

const generalRules = (context: RubricPromptContext) => `Every criterion must be:
- general (query-agnostic): usable to grade responses to any request of this kind. Never name a topic, fact, person, number or quotation from one request.
- atomic: one thing to decide.
- binary and objective: a plain statement about a response that a grader can decide from the request and the response alone.
- discriminating: it tells better responses from worse ones; a criterion every reasonable response meets is useless.

Give each criterion an importance (its points: ${pointsLine(context.importancePoints)}): Essential, Important or Optional for something good ("met" is good), Pitfall for an undesirable behaviour ("met" means it happened). Give each a kind: "principle" (a general criterion is a judgement of quality; use "hard_rule" only for a requirement every request of this kind states) and a check: null unless a mechanical check below decides it exactly.`;

function clip(text: string): string {
  return text.length > shownTextLimit ? `${text.slice(0, shownTextLimit)} […]` : text;
}

export interface PromptRubricExample {
  prompt: readonly Message[];
  criteria: readonly string[];
}

export function distillProposeMessages(input: { examples: readonly PromptRubricExample[]; maxNew: number }, context: RubricPromptContext): ChatMessage[] {
  const blocks = input.examples.map((example) => ({ request: clip(renderConversation(example.prompt)), criteria: example.criteria.map((text) => `- ${text}`).join('\n') }));
  const nonce = fenceNonce(blocks.flatMap((block) => [block.request, block.criteria]));
  const system = `You distill general grading criteria. Below are requests of one kind, each with the criteria a rubric writer wrote for it. Find what these request-specific criteria have in common: the qualities that make responses to requests of this kind better or worse, whatever the topic. Write at most ${input.maxNew} general criteria that capture them, most important first. Merge criteria that say the same thing in different words; leave out what only one request needs.

${generalRules(context)}

${dataNotice('<request-ID> and <criteria-ID>')}

${checksSection(context.catalogue)}

${replyFormat}`;
  const parts = blocks.map((block, index) => `Request ${index + 1}:\n${fence('request', nonce, block.request)}\nIts criteria:\n${fence('criteria', nonce, block.criteria)}`);
  parts.push('Write the general criteria.');
  return [
    { role: 'system', content: system },
    { role: 'user', content: parts.join('\n\n') },
  ];
}

/** A candidate as the revision prompt shows it: its figures on the labelled pairs, and one pair it got wrong. */
export interface CandidateView {
  text: string;
  importance: string;
  agree: number;
  disagree: number;
  ties: number;
  wrongExample?: { prompt: readonly Message[]; preferred: string; rejected: string };
}

export function distillReviseMessages(input: { candidates: readonly CandidateView[] }, context: RubricPromptContext): ChatMessage[] {
  const rendered = input.candidates.map((candidate) => ({
    line: `[${candidate.importance}] ${candidate.text}\n  on the labelled pairs: picked the preferred response ${candidate.agree} times, the other ${candidate.disagree} times, no difference ${candidate.ties} times`,
    example: candidate.wrongExample ? { request: clip(renderConversation(candidate.wrongExample.prompt)), preferred: clip(candidate.wrongExample.preferred), rejected: clip(candidate.wrongExample.rejected) } : undefined,
  }));
  const nonce = fenceNonce(rendered.flatMap((entry) => [entry.line, entry.example?.request ?? '', entry.example?.preferred ?? '', entry.example?.rejected ?? '']));
  const system = `You revise general grading criteria. Each criterion below was tried on pairs of responses that a careful human compared: a good criterion is met by the preferred response and not by the other (or, for a Pitfall, met by the other only). These criteria picked the wrong response at least as often as the right one, or told no pair apart. Rewrite each one, at most one criterion per original, so that it captures what the human preferred; keep it general. Drop a criterion that cannot be saved by leaving it out.

${generalRules(context)}

${dataNotice('<criterion-ID>, <request-ID>, <preferred-ID> and <rejected-ID>')}

${checksSection(context.catalogue)}

${replyFormat}`;
  const parts = rendered.map((entry, index) => {
    const lines = [`Criterion ${index + 1}:\n${fence('criterion', nonce, entry.line)}`];
    if (entry.example) {
      lines.push(`A pair it got wrong. The request:\n${fence('request', nonce, entry.example.request)}`);
      lines.push(`The preferred response:\n${fence('preferred', nonce, entry.example.preferred)}`);
      lines.push(`The rejected response:\n${fence('rejected', nonce, entry.example.rejected)}`);
    }
    return lines.join('\n');
  });
  parts.push('Return the revised criteria.');
  return [
    { role: 'system', content: system },
    { role: 'user', content: parts.join('\n\n') },
  ];
}

export function distillHardenMessages(input: { prompt: readonly Message[]; preferred: string; other: string; criteria: readonly string[]; maxNew: number }, context: RubricPromptContext): ChatMessage[] {
  const request = clip(renderConversation(input.prompt));
  const [preferred, other] = [clip(input.preferred), clip(input.other)];
  const criteria = input.criteria.map((text) => `- ${text}`).join('\n');
  const nonce = fenceNonce([request, preferred, other, criteria]);
  const system = `You make a general rubric harder. Two strong responses to a request both meet every criterion of the rubric below, so it cannot tell them apart, yet a careful human preferred one of them. Write at most ${input.maxNew} stricter criteria that the preferred response meets and the other does not, for reasons that matter for any request of this kind: more demanding versions of what the rubric asks, or qualities it misses. Never restate a criterion already in the rubric.

${generalRules(context)}

${dataNotice('<request-ID>, <criteria-ID>, <preferred-ID> and <other-ID>')}

${checksSection(context.catalogue)}

${replyFormat}`;
  const parts = [
    `The request:\n${fence('request', nonce, request)}`,
    `The rubric both responses satisfy:\n${fence('criteria', nonce, criteria)}`,
    `The preferred response:\n${fence('preferred', nonce, preferred)}`,
    `The other response:\n${fence('other', nonce, other)}`,
    'Write the stricter criteria.',
  ];
  return [
    { role: 'system', content: system },
    { role: 'user', content: parts.join('\n\n') },
  ];
}
