/**
 * Request "dialects" the judge simulator understands: how each grader lays out (response,
 * criteria) in its chat request, and the reply format it expects back.
 *
 * - `rubricate`: nonce-delimited response and `<criterion>` blocks in the last user message;
 *   one verdict object, or a `verdicts` map when several criteria are batched; several
 *   labelled responses (`<response-A-NONCE>` …) graded listwise, answered
 *   `{"responses": [{label, verdicts}]}`; two (`<response-1-NONCE>`, `<response-2-NONCE>`)
 *   compared pairwise, answered `{explanation, winner}`.
 * - `promptfoo`: promptfoo's llm-rubric grading prompt (`<Output>` / `<Rubric>`); reply
 *   `{reason, pass, score}`.
 * - `healthbench-layout`: the simple-evals HealthBench grader layout with our length-matched
 *   stand-in template; reply `{explanation, criteria_met}` in a ```json fence.
 */
import {
  conversationPlaceholder,
  healthBenchLayoutMarker,
  healthBenchStandInTemplate,
  rubricItemPlaceholder,
} from '../reference-layout/template.js';
import { createHash } from 'node:crypto';
import type { TextMessage } from './tokens.js';
import { simulatedExplanation } from './verdict.js';

export type Dialect = 'rubricate' | 'promptfoo' | 'healthbench-layout';

export interface ExtractedCriterion {
  /** `id` attribute (rubricate only). */
  id?: string;
  /** `points` attribute or rubric-item points, as written. */
  points?: string;
  text: string;
  /** Allowed labels when the reply schema asks for an ordinal `choice` (scales, holistic mode). */
  choices?: string[];
}

export type ReplyShape = 'single' | 'batched' | 'listwise' | 'pairwise' | 'promptfoo' | 'healthbench';

export interface InterpretedRequest {
  dialect: Dialect;
  response: string;
  criteria: ExtractedCriterion[];
  replyShape: ReplyShape;
  /** Listwise and pairwise requests: the labelled responses, in the order shown. */
  responses?: Array<{ label: string; text: string }>;
}

export type Interpretation = { ok: true; request: InterpretedRequest } | { ok: false; error: string };

/** Chat message content as plain text: strings as they are, text parts concatenated. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    let text = '';
    for (const part of content) {
      if (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string') text += (part as { text: string }).text;
    }
    return text;
  }
  return '';
}

/** Reads `messages` of a chat completion body into plain text messages, or explains why not. */
export function readMessages(body: unknown): { ok: true; messages: TextMessage[] } | { ok: false; error: string } {
  if (!body || typeof body !== 'object') return { ok: false, error: 'request body must be a JSON object' };
  const messages = (body as { messages?: unknown }).messages;
  if (!Array.isArray(messages) || messages.length === 0) return { ok: false, error: '`messages` must be a non-empty array' };
  const result: TextMessage[] = [];
  for (const message of messages) {
    if (!message || typeof message !== 'object') return { ok: false, error: 'each message must be an object' };
    const role = (message as { role?: unknown }).role;
    if (typeof role !== 'string') return { ok: false, error: 'each message needs a string `role`' };
    result.push({ role, content: contentText((message as { content?: unknown }).content) });
  }
  return { ok: true, messages: result };
}

const promptfooMarker = 'grading output according to a user-specified rubric';

/** Recognises the dialect of a chat request and extracts the graded response and criteria. */
export function interpretRequest(body: unknown, messages: readonly TextMessage[]): Interpretation {
  if (messages.some((message) => message.content.includes(promptfooMarker))) return interpretPromptfoo(messages);
  const layoutMessage = messages.find((message) => message.role === 'user' && message.content.startsWith(healthBenchLayoutMarker));
  if (layoutMessage) return interpretHealthBenchLayout(layoutMessage.content);
  const lastUser = [...messages].reverse().find((message) => message.role === 'user');
  if (lastUser && responseOpenPattern.test(lastUser.content)) return interpretRubricate(body, lastUser.content);
  if (lastUser && labelledResponsePattern.test(lastUser.content)) return interpretLabelled(body, lastUser.content);
  return {
    ok: false,
    error:
      'unrecognised grading request: expected a rubricate judge prompt (<response-NONCE> and <criterion> blocks), ' +
      "promptfoo's llm-rubric prompt, or the HealthBench reference layout",
  };
}

// ---------------------------------------------------------------- rubricate

const responseOpenPattern = /^<response-([0-9a-f]{16})>$/m;
/** `<criterion-NONCE id=… points=…>` (the nonce is optional for older prompts). */
const criterionOpenPattern = /^<criterion(-[0-9a-f]{16})?\b([^>\n]*)>\n/gm;

function unescapeAttribute(value: string): string {
  return value.replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

function attribute(attributes: string, name: string): string | undefined {
  const match = new RegExp(`\\b${name}="([^"]*)"`).exec(attributes);
  return match ? unescapeAttribute(match[1]) : undefined;
}

/** Finds `<tag-NONCE>` … `</tag-NONCE>` (each on its own line); returns the inner text and span. */
function delimitedSection(content: string, tag: string, nonce: string): { inner: string; start: number; end: number } | undefined {
  const open = `<${tag}-${nonce}>`;
  const close = `</${tag}-${nonce}>`;
  let openAt = content.indexOf(open);
  while (openAt !== -1 && !(openAt === 0 || content[openAt - 1] === '\n')) openAt = content.indexOf(open, openAt + 1);
  if (openAt === -1) return undefined;
  const afterOpen = openAt + open.length;
  const closeAt = content.indexOf(`\n${close}`, afterOpen);
  if (closeAt === -1) return undefined;
  const inner = closeAt === afterOpen ? '' : content.slice(afterOpen + 1, closeAt);
  return { inner, start: openAt, end: closeAt + 1 + close.length };
}

function interpretRubricate(body: unknown, content: string): Interpretation {
  const nonce = responseOpenPattern.exec(content)?.[1] as string;
  const response = delimitedSection(content, 'response', nonce);
  if (!response) return { ok: false, error: `rubricate request: <response-${nonce}> has no closing </response-${nonce}> line` };
  // Criterion blocks are searched outside the nonce-delimited texts, which may contain anything.
  const spans = [response];
  const conversation = delimitedSection(content, 'conversation', nonce);
  if (conversation) spans.push(conversation);
  let outside = content;
  for (const span of spans.sort((left, right) => right.start - left.start)) {
    outside = outside.slice(0, span.start) + ' '.repeat(span.end - span.start) + outside.slice(span.end);
  }
  const criteria: ExtractedCriterion[] = [];
  criterionOpenPattern.lastIndex = 0;
  for (let match = criterionOpenPattern.exec(outside); match; match = criterionOpenPattern.exec(outside)) {
    const textStart = match.index + match[0].length;
    const close = `\n</criterion${match[1] ?? ''}>`;
    const closeAt = outside.indexOf(close, textStart - 1);
    if (closeAt === -1) return { ok: false, error: `rubricate request: <criterion> block without a closing ${close.trim()} line` };
    criteria.push({
      id: attribute(match[2], 'id'),
      points: attribute(match[2], 'points'),
      text: closeAt < textStart ? '' : content.slice(textStart, closeAt),
    });
    criterionOpenPattern.lastIndex = closeAt + close.length;
  }
  if (criteria.length === 0) return { ok: false, error: 'rubricate request: no <criterion id="…" points="…"> blocks found' };
  const schemaName = responseFormatName(body);
  attachChoices(body, schemaName, criteria);
  let replyShape: ReplyShape;
  if (schemaName === 'criteria_verdicts') replyShape = 'batched';
  else if (schemaName === 'criterion_verdict') replyShape = 'single';
  else replyShape = criteria.length === 1 ? 'single' : 'batched';
  return { ok: true, request: { dialect: 'rubricate', response: response.inner, criteria, replyShape } };
}

interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  enum?: unknown[];
}

/** Ordinal criteria: the schema lists the labels the reply's `choice` may take. */
function attachChoices(body: unknown, schemaName: string | undefined, criteria: ExtractedCriterion[]): void {
  const schema = (body as { response_format?: { json_schema?: { schema?: SchemaNode } } } | null)?.response_format?.json_schema?.schema;
  if (!schema) return;
  const labels = (node: SchemaNode | undefined) => node?.properties?.choice?.enum?.filter((value): value is string => typeof value === 'string');
  if (schemaName === 'criterion_verdict' && criteria.length === 1) {
    const choices = labels(schema);
    if (choices && choices.length > 0) criteria[0].choices = choices;
    return;
  }
  const entries = schema.properties?.verdicts?.properties;
  for (const criterion of criteria) {
    const choices = criterion.id !== undefined ? labels(entries?.[criterion.id]) : undefined;
    if (choices && choices.length > 0) criterion.choices = choices;
  }
}

/** A deterministic label for an ordinal criterion, like the binary verdicts: a function of (criterion, response). */
function simulatedChoice(choices: string[], criterion: string, response: string): string {
  const byte = createHash('sha256').update(`choice\u0000${criterion.trim()}\u0000${response.trim()}`).digest()[0];
  return choices[byte % choices.length];
}

function verdictFor(criterion: ExtractedCriterion, opinion: { explanation: string; met: boolean }, response: string): Record<string, unknown> {
  return criterion.choices ? { explanation: opinion.explanation, choice: simulatedChoice(criterion.choices, criterion.text, response) } : { explanation: opinion.explanation, criteria_met: opinion.met };
}

function responseFormatName(body: unknown): string | undefined {
  const format = (body as { response_format?: { json_schema?: { name?: unknown } } } | null)?.response_format;
  const name = format?.json_schema?.name;
  return typeof name === 'string' ? name : undefined;
}

/** A labelled response block of a listwise (`A`, `B`, …) or pairwise (`1`, `2`) prompt. */
const labelledResponsePattern = /^<response-([A-Z]+|[12])-([0-9a-f]{16})>$/m;

function interpretLabelled(body: unknown, content: string): Interpretation {
  const nonce = labelledResponsePattern.exec(content)?.[2] as string;
  const responses: Array<{ label: string; text: string }> = [];
  const spans: Array<{ start: number; end: number }> = [];
  const blockPattern = new RegExp(`^<response-([A-Z]+|[12])-${nonce}>$`, 'gm');
  for (let match = blockPattern.exec(content); match; match = blockPattern.exec(content)) {
    const section = delimitedSection(content, `response-${match[1]}`, nonce);
    if (!section) return { ok: false, error: `rubricate request: <response-${match[1]}-${nonce}> has no closing line` };
    responses.push({ label: match[1], text: section.inner });
    spans.push(section);
    blockPattern.lastIndex = section.end;
  }
  const conversation = delimitedSection(content, 'conversation', nonce);
  if (conversation) spans.push(conversation);
  let outside = content;
  for (const span of spans.sort((left, right) => right.start - left.start)) outside = outside.slice(0, span.start) + ' '.repeat(span.end - span.start) + outside.slice(span.end);
  const criteria: ExtractedCriterion[] = [];
  const criterionPattern = /^<criterion-([0-9a-f]{16})([^>\n]*)>\n/gm;
  for (let match = criterionPattern.exec(outside); match; match = criterionPattern.exec(outside)) {
    const textStart = match.index + match[0].length;
    const closeAt = outside.indexOf(`\n</criterion-${match[1]}>`, textStart - 1);
    if (closeAt === -1) return { ok: false, error: 'rubricate request: <criterion> block without a closing line' };
    criteria.push({ id: attribute(match[2], 'id'), points: attribute(match[2], 'points'), text: closeAt < textStart ? '' : content.slice(textStart, closeAt) });
    criterionPattern.lastIndex = closeAt;
  }
  if (criteria.length === 0) return { ok: false, error: 'rubricate request: labelled responses but no criterion block' };
  const pairwise = responses.length === 2 && responses[0].label === '1' && responses[1].label === '2';
  if (!pairwise) attachListwiseChoices(body, criteria);
  return { ok: true, request: { dialect: 'rubricate', response: responses[0]?.text ?? '', criteria, replyShape: pairwise ? 'pairwise' : 'listwise', responses } };
}

/** Ordinal criteria of a listwise request: the labels its schema allows for `choice`. */
function attachListwiseChoices(body: unknown, criteria: ExtractedCriterion[]): void {
  const schema = (body as { response_format?: { json_schema?: { schema?: { properties?: { responses?: { items?: SchemaNode } } } } } } | null)?.response_format?.json_schema?.schema;
  const entries = schema?.properties?.responses?.items?.properties?.verdicts?.properties;
  for (const criterion of criteria) {
    const choices = criterion.id !== undefined ? entries?.[criterion.id]?.properties?.choice?.enum?.filter((value): value is string => typeof value === 'string') : undefined;
    if (choices && choices.length > 0) criterion.choices = choices;
  }
}

/** The simulated judge's preference between two responses on a criterion: a hash order, the same whichever is shown first. */
function preferred(criterion: string, first: string, second: string): '1' | '2' | 'tie' {
  const rank = (response: string) => createHash('sha256').update(`prefer\u0000${criterion.trim()}\u0000${response.trim()}`).digest().readUInt32BE(0);
  const [a, b] = [rank(first), rank(second)];
  return a === b ? 'tie' : a > b ? '1' : '2';
}

// ---------------------------------------------------------------- promptfoo

function stripOneNewline(text: string): string {
  let result = text;
  if (result.startsWith('\n')) result = result.slice(1);
  if (result.endsWith('\n')) result = result.slice(0, -1);
  return result;
}

function interpretPromptfoo(messages: readonly TextMessage[]): Interpretation {
  const holderIndex = messages.map((message) => message.content.includes('<Rubric>')).lastIndexOf(true);
  if (holderIndex === -1) return { ok: false, error: 'promptfoo request: no <Rubric> block' };
  const content = messages[holderIndex].content;
  const rubricOpen = content.lastIndexOf('<Rubric>');
  const rubricClose = content.lastIndexOf('</Rubric>');
  if (rubricClose < rubricOpen) return { ok: false, error: 'promptfoo request: <Rubric> block is not closed' };
  const beforeRubric = content.slice(0, rubricOpen);
  // The system message's worked examples carry their own <Output> blocks; when they sit in the
  // same message as the graded output (non-chat rendering), the graded one is the last block.
  const examplesInSameMessage = content.includes(promptfooMarker);
  const outputOpen = examplesInSameMessage ? beforeRubric.lastIndexOf('<Output>') : beforeRubric.indexOf('<Output>');
  const outputClose = beforeRubric.lastIndexOf('</Output>');
  if (outputOpen === -1 || outputClose < outputOpen) return { ok: false, error: 'promptfoo request: no <Output> block before the rubric' };
  const response = stripOneNewline(beforeRubric.slice(outputOpen + '<Output>'.length, outputClose));
  const rubric = stripOneNewline(content.slice(rubricOpen + '<Rubric>'.length, rubricClose));
  return { ok: true, request: { dialect: 'promptfoo', response, criteria: [{ text: rubric }], replyShape: 'promptfoo' } };
}

// ---------------------------------------------------------------- HealthBench layout

const [layoutHead, layoutRest] = healthBenchStandInTemplate.split(conversationPlaceholder);
const [layoutMiddle, layoutTail] = layoutRest.split(rubricItemPlaceholder);

function interpretHealthBenchLayout(content: string): Interpretation {
  if (!content.startsWith(layoutHead) || !content.endsWith(layoutTail)) {
    return { ok: false, error: 'healthbench-layout request: the user message does not follow the stand-in grader template' };
  }
  const body = content.slice(layoutHead.length, content.length - layoutTail.length);
  const split = body.lastIndexOf(layoutMiddle);
  if (split === -1) return { ok: false, error: 'healthbench-layout request: no "# Rubric item" section' };
  const conversation = body.slice(0, split);
  const rubricItem = body.slice(split + layoutMiddle.length);
  const lastTurn = conversation.lastIndexOf('\n\nassistant: ');
  let response: string;
  if (lastTurn !== -1) response = conversation.slice(lastTurn + '\n\nassistant: '.length);
  else if (conversation.startsWith('assistant: ')) response = conversation.slice('assistant: '.length);
  else return { ok: false, error: 'healthbench-layout request: the conversation has no final assistant turn' };
  const pointsMatch = /^\[([^\]\n]*)\] /.exec(rubricItem);
  const criterion: ExtractedCriterion = pointsMatch
    ? { points: pointsMatch[1], text: rubricItem.slice(pointsMatch[0].length) }
    : { text: rubricItem };
  return { ok: true, request: { dialect: 'healthbench-layout', response, criteria: [criterion], replyShape: 'healthbench' } };
}

// ---------------------------------------------------------------- replies

/** Verdicts a request asks for: one per criterion, per response for listwise requests (a comparison is one). */
export function verdictCount(request: InterpretedRequest): number {
  return request.replyShape === 'listwise' ? request.criteria.length * (request.responses?.length ?? 0) : request.criteria.length;
}

/** The reply text the simulated judge gives, in the request's dialect. */
export function buildReply(request: InterpretedRequest, explanationWords: number): string {
  const opinions = request.criteria.map((criterion) => simulatedExplanation(criterion.text, request.response, explanationWords));
  switch (request.replyShape) {
    case 'single':
      return JSON.stringify(verdictFor(request.criteria[0], opinions[0], request.response));
    case 'batched': {
      const verdicts: Record<string, Record<string, unknown>> = {};
      request.criteria.forEach((criterion, index) => {
        verdicts[criterion.id ?? String(index)] = verdictFor(criterion, opinions[index], request.response);
      });
      return JSON.stringify({ verdicts });
    }
    case 'listwise':
      return JSON.stringify({
        responses: (request.responses ?? []).map((response) => {
          const verdicts: Record<string, Record<string, unknown>> = {};
          request.criteria.forEach((criterion, index) => {
            verdicts[criterion.id ?? String(index)] = verdictFor(criterion, simulatedExplanation(criterion.text, response.text, explanationWords), response.text);
          });
          return { label: response.label, verdicts };
        }),
      });
    case 'pairwise': {
      const [first, second] = request.responses ?? [];
      return JSON.stringify({ explanation: opinions[0].explanation, winner: preferred(request.criteria[0].text, first.text, second.text) });
    }
    case 'promptfoo':
      return JSON.stringify({ reason: opinions[0].explanation, pass: opinions[0].met, score: opinions[0].met ? 1 : 0 });
    case 'healthbench':
      return `\`\`\`json\n${JSON.stringify({ explanation: opinions[0].explanation, criteria_met: opinions[0].met }, null, 2)}\n\`\`\``;
  }
}
