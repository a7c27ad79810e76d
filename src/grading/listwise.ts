/**
 * Listwise judging (after OpenPipe ART's RULER): the responses to one prompt are graded
 * together, the conversation, reference and criteria written once and each distinct response
 * once, under masked labels (A, B, …) in a seeded shuffled order. Optionally a second call
 * shows them in the reverse order, and the two are folded into one verdict per (response,
 * criterion) with the share of verdicts the orders agree on (position consistency).
 *
 * A group rides on the ordinary engine, as pairwise comparisons do: it becomes one item whose
 * "criteria" are (response, order, criterion) triples, so caching, dedupe, retries, splitting
 * and errors are the engine's. Each response's verdict is read from its own entry of the reply:
 * a response the reply leaves out, or gives twice, is an error for that response's criteria
 * (asked again, then reported), never a "not met".
 */
import { createHash } from 'node:crypto';
import { RubricateError } from '../errors.js';
import type { JudgeReply, JudgeRequest } from '../judges/types.js';
import type { ModelLimits } from '../judges/profiles.js';
import type { Criterion, Item, Message } from '../rubric/schema.js';
import { unclashedNonce } from '../util/nonce.js';
import { seededRandom, shuffled } from '../util/random.js';
import { isRecord } from '../util/is-record.js';
import type { ExplanationLength } from '../spec/run-spec.js';
import { listwiseOutputBudget, splitGroupToFit } from './budget.js';
import { estimateTokens } from './evidence.js';
import { promptRulesVersion, withPromptRules } from './prompt-rules.js';
import { extractJson, truncatedReply, unparseable } from './parse.js';
import { listwiseTemplate } from './prompts.js';
import { renderConversation, renderCriterion } from './render.js';
import type { CriterionResult, CriterionVerdict, GradingStrategy, JudgeTask, SamplingOptions, TaskDecision } from './types.js';
import { readVerdict, verdictSchemaForLength } from './verdicts.js';
import { requestSampling } from './sampling.js';

/** The responses to one prompt, graded together on the same criteria. */
export interface ListwiseGroup {
  id: string;
  prompt: Message[];
  reference?: string;
  /** Distinct responses, in order of first appearance (identical responses are graded once). */
  responses: string[];
  /** Presentation orders: each a permutation of response indices (the second, when asked, the reverse of the first). */
  orders: number[][];
  /** The criteria every response is judged on. */
  criteria: Criterion[];
}

/** The masked label of the response shown at `position` of a call: A…Z, then AA, AB, … */
export function responseLabel(position: number): string {
  let label = '';
  let rest = position;
  do {
    label = String.fromCharCode(65 + (rest % 26)) + label;
    rest = Math.floor(rest / 26) - 1;
  } while (rest >= 0);
  return label;
}

/** Synthetic criterion id of one (response, order, criterion) verdict. */
export function listwisePairId(response: number, order: number, criterionId: string): string {
  return `${response}.${order}:${criterionId}`;
}

/** What one synthetic criterion of a group item stands for: a response, a presentation order and a criterion of the group. */
export interface ListwisePair {
  response: number;
  order: number;
  criterion: Criterion;
}

/** A group item's group and its synthetic criteria by id: typed, never read back from the item's text or metadata. */
interface GroupOfItem {
  group: ListwiseGroup;
  pairs: ReadonlyMap<string, ListwisePair>;
}

const groupsOfItems = new WeakMap<Item, GroupOfItem>();

/** The group a group item stands for (the engine hands the strategy the item `listwiseItem` made). */
function groupOfItem(item: Item): GroupOfItem {
  const found = groupsOfItems.get(item);
  if (!found) throw new RubricateError('INTERNAL', 'listwise strategy given an item that is not a group');
  return found;
}

/**
 * Presentation orders of `count` responses: a shuffle seeded by the group's content (and the
 * run's seed), so the same group is always shown the same way (same requests, same cache
 * keys); the second order, when asked, is the first reversed: each response moves as far as it can.
 */
export function presentationOrders(group: Pick<ListwiseGroup, 'prompt' | 'responses' | 'reference'>, orders: 1 | 2, seed = 0): number[][] {
  const hash = createHash('sha256').update(`rubricate-listwise-order\u0000${seed}\u0000`);
  for (const message of group.prompt) hash.update(`${message.role}\u0000${message.content}\u0000`);
  for (const response of group.responses) hash.update(`\u0001${response}`);
  hash.update(`\u0002${group.reference ?? ''}`);
  const first = shuffled(
    group.responses.map((_, index) => index),
    seededRandom(hash.digest().readUInt32LE(0)),
  );
  return orders === 2 ? [first, [...first].reverse()] : [first];
}

/** The item the engine grades for a group: one synthetic criterion per (response, order, criterion). */
export function listwiseItem(group: ListwiseGroup): Item {
  const criteria: Criterion[] = [];
  const pairs = new Map<string, ListwisePair>();
  for (let order = 0; order < group.orders.length; order += 1) {
    for (const response of group.orders[order]) {
      for (const criterion of group.criteria) {
        const { check: _check, subchecks: _subchecks, subcheckRule: _rule, subcheckPenalty: _penalty, ...judged } = criterion;
        const id = listwisePairId(response, order, criterion.id);
        criteria.push({ ...judged, id });
        pairs.set(id, { response, order, criterion });
      }
    }
  }
  const item: Item = {
    id: group.id,
    prompt: group.prompt,
    response: '',
    rubric: { id: `listwise:${group.id}`, criteria },
    ...(group.reference !== undefined ? { reference: group.reference } : {}),
  };
  groupsOfItems.set(item, { group, pairs });
  return item;
}

const nonceMemo = new WeakMap<ListwiseGroup, string>();

/** One nonce for every block of the group's calls, derived from all of its texts, which none of them contains. */
function groupNonce(group: ListwiseGroup): string {
  let nonce = nonceMemo.get(group);
  if (nonce !== undefined) return nonce;
  const hash = createHash('sha256').update('rubricate-listwise\u0000');
  for (const message of group.prompt) hash.update(`${message.role}\u0000${message.content}\u0000`);
  for (const response of group.responses) hash.update(`\u0001${response}`);
  hash.update(`\u0002${group.reference ?? ''}`);
  const texts = [...group.prompt.map((message) => message.content), ...group.responses, group.reference ?? ''];
  nonce = unclashedNonce(hash.digest('hex').slice(0, 16), (candidate) => texts.some((text) => text.includes(`-${candidate}>`)));
  nonceMemo.set(group, nonce);
  return nonce;
}

function renderResponses(group: ListwiseGroup, responses: readonly number[]): string {
  const nonce = groupNonce(group);
  return responses.map((response, position) => `<response-${responseLabel(position)}-${nonce}>\n${group.responses[response]}\n</response-${responseLabel(position)}-${nonce}>`).join('\n\n');
}

function renderShared(group: ListwiseGroup): string {
  const nonce = groupNonce(group);
  const parts = [`<conversation-${nonce}>\n${renderConversation(group)}\n</conversation-${nonce}>`];
  if (group.reference !== undefined && group.reference !== '') parts.push(`<reference-${nonce}>\n${group.reference}\n</reference-${nonce}>`);
  return parts.join('\n\n');
}

function replySchema(labels: string[], criteria: readonly Criterion[], explanation: ExplanationLength): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const criterion of criteria) properties[criterion.id] = verdictSchemaForLength(criterion, explanation);
  return {
    type: 'object',
    properties: {
      responses: {
        type: 'array',
        // One entry per response shown: a reply that leaves one out cannot be used, so the schema says so.
        minItems: labels.length,
        maxItems: labels.length,
        items: {
          type: 'object',
          properties: { label: { type: 'string', enum: labels }, verdicts: { type: 'object', properties, required: criteria.map((criterion) => criterion.id), additionalProperties: false } },
          required: ['label', 'verdicts'],
          additionalProperties: false,
        },
      },
    },
    required: ['responses'],
    additionalProperties: false,
  };
}

/** A label as the judge wrote it, read leniently: `"b"`, `"Response B"` and `" B "` are B. */
function normalizedLabel(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  return value.trim().replace(/^response\s+/i, '').toUpperCase();
}

export interface ListwiseOptions {
  sampling: SamplingOptions;
  /** Most criteria in one call (Infinity: every criterion). */
  criteriaPerCall: number;
  explanation?: ExplanationLength;
}

/** What every call of a listwise run shares. */
interface ListwiseState {
  instructions: string;
  templateVersion: string;
  explanation: ExplanationLength;
  sampling: SamplingOptions;
  criteriaPerCall: number;
}

export function createListwiseStrategy(options: ListwiseOptions): GradingStrategy {
  const explanation = options.explanation ?? 'full';
  const state: ListwiseState = {
    instructions: withPromptRules(listwiseTemplate.instructions, 'listwise', { explanation }),
    templateVersion: promptRulesVersion(listwiseTemplate.version, { explanation }),
    explanation,
    sampling: options.sampling,
    criteriaPerCall: options.criteriaPerCall,
  };
  return { name: 'listwise', templateVersion: state.templateVersion, plan: (item, pairs, limits) => planListwise(state, item, pairs, limits) };
}

/** A group item's calls: per presentation order, its responses and criteria split to fit the judge. */
function planListwise(state: ListwiseState, item: Item, pairs: Criterion[], limits?: ModelLimits): JudgeTask[] {
  const { group } = groupOfItem(item);
  const wanted = new Set(pairs.map((pair) => pair.id));
  const pairById = new Map(pairs.map((pair) => [pair.id, pair]));
  const tasks: JudgeTask[] = [];
  const sharedTokens = limits?.contextWindow !== undefined ? estimateTokens(renderShared(group)) + estimateTokens(state.instructions) : 0;
  group.orders.forEach((presentation, order) => {
    const responses = presentation.filter((response) => group.criteria.some((criterion) => wanted.has(listwisePairId(response, order, criterion.id))));
    const criteria = group.criteria.filter((criterion) => responses.some((response) => wanted.has(listwisePairId(response, order, criterion.id))));
    if (responses.length === 0) return;
    const calls = splitGroupToFit(criteria, {
      maxCriteriaPerCall: state.criteriaPerCall,
      tokensPerVerdict: state.sampling.maxTokens,
      limits,
      sharedPromptTokens: sharedTokens,
      responsePromptTokens: responses.map((response) => (limits?.contextWindow !== undefined ? estimateTokens(group.responses[response]) : 0)),
      criterionPromptTokens: (criterion) => (limits?.contextWindow !== undefined ? estimateTokens(renderCriterion(criterion)) : 0),
    });
    for (const call of calls) {
      const shown = call.responses.map((position) => responses[position]);
      const taskPairs = shown.flatMap((response) => call.criteria.map((criterion) => pairById.get(listwisePairId(response, order, criterion.id))).filter((pair): pair is Criterion => pair !== undefined));
      if (taskPairs.length === 0) continue;
      tasks.push(listwiseTask(state, item, shown, call.criteria, taskPairs));
    }
  });
  return tasks;
}

/** One call: the responses `shown` (in this order, under masked labels) on `criteria`; it decides `taskPairs`. */
function listwiseTask(state: ListwiseState, item: Item, shown: number[], criteria: Criterion[], taskPairs: Criterion[]): JudgeTask {
  const { group } = groupOfItem(item);
  const labels = shown.map((_, position) => responseLabel(position));
  const blocks = criteria.map(renderCriterion).join('\n\n');
  const { sampling } = state;
  const request: JudgeRequest = {
    messages: [
      { role: 'system', content: state.instructions },
      { role: 'user', content: `${renderShared(group)}\n\n${renderResponses(group, shown)}\n\n${blocks}` },
    ],
    output: { name: 'listwise_verdicts', schema: replySchema(labels, criteria, state.explanation) },
    ...requestSampling({ ...sampling, maxTokens: listwiseOutputBudget(criteria, shown.length, sampling.maxTokens) }),
  };
  // The conversation is the prefix every call of the group shares.
  request.sharedPrefix = { message: 1, characters: renderShared(group).length };
  return { item, criteria: taskPairs, request, templateVersion: state.templateVersion, decide: (reply) => decideListwise(item, shown, labels, taskPairs, reply) };
}

/** A reply's entries by masked label (a label given twice keeps both, so that the ambiguity is reported). */
function entriesByLabel(entries: unknown[]): Map<string, unknown[]> {
  const byLabel = new Map<string, unknown[]>();
  for (const entry of entries) {
    const label = isRecord(entry) ? normalizedLabel(entry.label) : undefined;
    if (label === undefined) continue;
    byLabel.set(label, [...(byLabel.get(label) ?? []), entry]);
  }
  return byLabel;
}

/** Each shown response's verdicts read from its own entry of the reply; a missing or doubled entry is an error for its criteria. */
function decideListwise(item: Item, shown: number[], labels: string[], taskPairs: Criterion[], reply: JudgeReply): TaskDecision {
  const { pairs } = groupOfItem(item);
  const decision: TaskDecision = { verdicts: new Map(), errors: new Map() };
  const failAll = (error: RubricateError): TaskDecision => ({ verdicts: new Map(), errors: new Map(taskPairs.map((pair) => [pair.id, error])) });
  const truncated = truncatedReply(reply);
  if (truncated) return failAll(truncated);
  const parsed = extractJson(reply.text);
  if (!parsed.ok) return failAll(unparseable(parsed.reason, reply.text));
  const entries = isRecord(parsed.value) ? parsed.value.responses : undefined;
  if (!Array.isArray(entries)) return failAll(unparseable('reply has no "responses" list', reply.text));
  const byLabel = entriesByLabel(entries);
  shown.forEach((response, position) => {
    const label = labels[position];
    const found = byLabel.get(label) ?? [];
    const problem =
      found.length === 0 ? `reply has no entry for response ${label}` : found.length > 1 ? `reply gives response ${label} ${found.length} times: which entry holds its verdicts is ambiguous` : undefined;
    const verdicts = problem ? undefined : (found[0] as Record<string, unknown>).verdicts;
    for (const pair of taskPairs.filter((candidate) => pairs.get(candidate.id)!.response === response)) {
      const { criterion } = pairs.get(pair.id)!;
      if (problem) {
        decision.errors.set(pair.id, new RubricateError('JUDGE_UNPARSEABLE', problem));
        continue;
      }
      const entry = isRecord(verdicts) ? verdicts[criterion.id] : undefined;
      if (entry === undefined) {
        decision.errors.set(pair.id, new RubricateError('JUDGE_UNPARSEABLE', `reply has no verdict on criterion ${criterion.id} for response ${label}`));
        continue;
      }
      const verdict = readVerdict(criterion, entry);
      if (RubricateError.isInstance(verdict)) decision.errors.set(pair.id, new RubricateError(verdict.code, `response ${label}: ${verdict.message}`));
      else decision.verdicts.set(pair.id, verdict);
    }
  });
  return decision;
}

/** One response's verdicts, folded over the presentation orders. */
export interface FoldedResponse {
  /** By criterion id. */
  criteria: Map<string, CriterionResult>;
  /** Verdicts graded in both presentation orders, and how many of them the orders agree on (0 and 0 with one order). */
  orders: { compared: number; agreed: number };
}

function sameVerdict(first: CriterionVerdict, second: CriterionVerdict, criterion: Criterion): boolean {
  return criterion.scale?.type === 'ordinal' ? first.label === second.label : first.met === second.met;
}

/**
 * Each distinct response's verdict per criterion from the graded synthetic criteria. With two
 * orders: the verdict both give; where they disagree, half credit and not met (as a split jury),
 * said in the explanation; where one order failed, the criterion is an error (never a guess
 * from the other order).
 */
export function foldListwise(group: ListwiseGroup, results: ReadonlyMap<string, CriterionResult>): FoldedResponse[] {
  return group.responses.map((_, response) => {
    const criteria = new Map<string, CriterionResult>();
    let both = 0;
    let agreed = 0;
    for (const criterion of group.criteria) {
      const perOrder = group.orders.map((_, order) => results.get(listwisePairId(response, order, criterion.id)));
      const failed = perOrder.find((result) => !result || result.status !== 'ok' || !result.verdict);
      if (failed) {
        const error = failed?.error ?? new RubricateError('INTERNAL', `no verdict for ${criterion.id}`).toJSON();
        const message = perOrder.length > 1 ? `${perOrder.indexOf(failed) === 0 ? 'first' : 'second'} presentation order: ${error.message}` : error.message;
        criteria.set(criterion.id, { criterion, source: 'judge', status: 'error', error: { ...error, message } });
        continue;
      }
      const verdicts = perOrder.map((result) => result!.verdict!);
      if (verdicts.length === 1) {
        criteria.set(criterion.id, { criterion, source: 'judge', status: 'ok', verdict: verdicts[0] });
        continue;
      }
      both += 1;
      if (sameVerdict(verdicts[0], verdicts[1], criterion)) {
        agreed += 1;
        criteria.set(criterion.id, { criterion, source: 'judge', status: 'ok', verdict: verdicts[0] });
        continue;
      }
      const value = (verdicts[0].value + verdicts[1].value) / 2;
      const said = verdicts.map((verdict) => verdict.label ?? (verdict.met ? 'met' : 'not met'));
      criteria.set(criterion.id, {
        criterion,
        source: 'judge',
        status: 'ok',
        verdict: { met: false, value, source: 'judge', explanation: `the two presentation orders disagree (${said[0]}, then ${said[1]}): half credit. First: ${verdicts[0].explanation ?? ''} Second: ${verdicts[1].explanation ?? ''}`.trim() },
      });
    }
    return { criteria, orders: { compared: both, agreed } };
  });
}
