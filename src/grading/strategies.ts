/**
 * The judged grading modes: one call per criterion (default), or K criteria per call.
 * Both put everything that is the same for an item's criteria first and the criteria last.
 */
import { RubricateError } from '../errors.js';
import { digestOf } from '../util/hash.js';
import type { ChatMessage, JudgeReply, JudgeRequest } from '../judges/types.js';
import type { Criterion, Item } from '../rubric/schema.js';
import { extractJson, truncatedReply, unparseable } from './parse.js';
import type { ModelLimits } from '../judges/profiles.js';
import { batchedOutputBudget, groupCriteriaToFit } from './budget.js';
import { estimateTokens } from './evidence.js';
import { batchedTemplate, perCriterionTemplate } from './prompts.js';
import { itemDigest, renderCriterion, renderItemContext } from './render.js';
import type { CriterionVerdict, GradingStrategy, JudgeTask, SamplingOptions, TaskDecision, VerdictMode } from './types.js';
import { batchedSchemaFor, probabilityOfMet, readVerdict, verdictSchemaForLength } from './verdicts.js';
import { promptRulesVersion, withPromptRules } from './prompt-rules.js';
import { withExpectedScore } from './expected-score.js';
import type { AbstainPolicy, ExplanationLength } from '../spec/run-spec.js';
import type { Alignment, AlignmentExample } from '../spec/alignment.js';
import { isRecord } from '../util/is-record.js';
import { calibratedVerdict, examplesFor, renderExamples, shownCriterion } from './alignment.js';
import { requestSampling } from './sampling.js';

export interface StrategyOptions {
  sampling: SamplingOptions;
  verdictMode?: VerdictMode;
  /** Alternatives per token asked for in probability mode. */
  topLogprobs?: number;
  /** How much the judge writes before each verdict (default `full`). */
  explanation?: ExplanationLength;
  /** The judge may answer cannot_assess (counted by this policy); absent: it must decide. */
  abstain?: AbstainPolicy;
  /** Examples, reworded criteria and a calibrator learnt from labels (`rubricate align`). */
  alignment?: Alignment;
}

/** What follows the item's context for some criteria: their examples block (if any), then their blocks as the judge is shown them. */
function criteriaTail(item: Item, criteria: readonly Criterion[], alignment: Alignment | undefined): string {
  const blocks = criteria.map((criterion) => renderCriterion(shownCriterion(alignment, criterion))).join('\n\n');
  const examples = new Set<AlignmentExample>();
  for (const criterion of criteria) for (const example of examplesFor(alignment, criterion, [item])) examples.add(example);
  const rendered = renderExamples([...examples]);
  return rendered === '' ? blocks : `${rendered}\n\n${blocks}`;
}

/**
 * A request whose messages are built on first access: a task served from the cache is
 * keyed by its `keyMaterial` and never needs its (kilobytes of) prompt text.
 */
function lazyRequest(fields: Omit<JudgeRequest, 'messages'>, build: () => ChatMessage[], item?: Item): JudgeRequest {
  let messages: ChatMessage[] | undefined;
  const request = Object.defineProperty({ ...fields }, 'messages', { get: () => (messages ??= build()), enumerable: true }) as JudgeRequest;
  // The user message (index 1) starts with the item's rendered context, shared by all its calls.
  if (item) Object.defineProperty(request, 'sharedPrefix', { get: () => ({ message: 1, characters: renderItemContext(item).length }), enumerable: true });
  return request;
}

function baseRequest(options: StrategyOptions): Omit<JudgeRequest, 'messages'> {
  const request: Omit<JudgeRequest, 'messages'> = requestSampling(options.sampling);
  if (options.verdictMode === 'probability' || options.verdictMode === 'expected-score') request.logprobs = { top: options.topLogprobs ?? 20 };
  return request;
}

function failAll(criteria: Criterion[], error: RubricateError): TaskDecision {
  return { verdicts: new Map(), errors: new Map(criteria.map((criterion) => [criterion.id, error])) };
}

function withProbability(verdict: CriterionVerdict, reply: JudgeReply, criterion: Criterion): CriterionVerdict | RubricateError {
  if (criterion.scale?.type === 'ordinal' || verdict.cannotAssess) return verdict;
  const probability = probabilityOfMet(reply);
  if (RubricateError.isInstance(probability)) return probability;
  return { ...verdict, probability, value: probability };
}

export function createPerCriterionStrategy(options: StrategyOptions): GradingStrategy {
  const requestFields = baseRequest(options);
  const explanation = options.explanation ?? 'full';
  const { alignment } = options;
  const rules = { explanation, abstain: options.abstain, alignment };
  const templates = { binary: withPromptRules(perCriterionTemplate.binary, 'binary', rules), ordinal: withPromptRules(perCriterionTemplate.ordinal, 'ordinal', rules) };
  const templateVersion = promptRulesVersion(perCriterionTemplate.version, rules);
  return {
    name: 'per-criterion',
    templateVersion,
    plan(item: Item, criteria: Criterion[]): JudgeTask[] {
      // The rendered context is a function of the item: its digest stands for it in cache keys.
      const shared = itemDigest(item);
      return criteria.map((criterion) => {
        const system = criterion.scale?.type === 'ordinal' ? templates.ordinal : templates.binary;
        const block = criteriaTail(item, [criterion], alignment);
        const request = lazyRequest({ ...requestFields, output: { name: 'criterion_verdict', schema: verdictSchemaForLength(criterion, explanation, options.abstain) }, subject: { item: item.id, criteria: [criterion.id] } }, () => [
          { role: 'system', content: system },
          { role: 'user', content: `${renderItemContext(item)}\n\n${block}` },
        ], item);
        return {
          item,
          criteria: [criterion],
          request,
          keyMaterial: `${digestOf(system)}\u0000${shared}\u0000${block}`,
          templateVersion,
          decide(reply: JudgeReply): TaskDecision {
            const truncated = truncatedReply(reply);
            if (truncated) return failAll([criterion], truncated);
            const parsed = extractJson(reply.text);
            if (!parsed.ok) return failAll([criterion], unparseable(parsed.reason, reply.text));
            let verdict = readVerdict(criterion, parsed.value, options.abstain);
            if (!RubricateError.isInstance(verdict) && options.verdictMode === 'probability') verdict = withProbability(verdict, reply, criterion);
            else if (!RubricateError.isInstance(verdict) && options.verdictMode === 'expected-score') verdict = withExpectedScore(verdict, reply, criterion);
            if (RubricateError.isInstance(verdict)) return failAll([criterion], verdict);
            return { verdicts: new Map([[criterion.id, calibratedVerdict(alignment, verdict)]]), errors: new Map() };
          },
        };
      });
    },
  };
}

export interface BatchedStrategyOptions extends StrategyOptions {
  /** Criteria per call; Infinity puts the whole rubric in one call. */
  criteriaPerCall: number;
}

export function createBatchedStrategy(options: BatchedStrategyOptions): GradingStrategy {
  if (!(options.criteriaPerCall >= 1)) {
    throw new RubricateError('CONFIG_INVALID', 'criteria per call must be at least 1', { field: 'criteria-per-call' });
  }
  const requestFields = baseRequest(options);
  const explanation = options.explanation ?? 'full';
  const { alignment } = options;
  const rules = { explanation, abstain: options.abstain, alignment };
  const instructions = withPromptRules(batchedTemplate.instructions, 'batched', rules);
  const templateVersion = promptRulesVersion(batchedTemplate.version, rules);
  return {
    name: 'batched',
    templateVersion,
    plan(item: Item, criteria: Criterion[], limits?: ModelLimits): JudgeTask[] {
      const shared = itemDigest(item);
      const tasks: JudgeTask[] = [];
      // Groups of at most criteriaPerCall whose verdicts fit the judge's output limit and context.
      const groups = groupCriteriaToFit(criteria, {
        maxPerCall: options.criteriaPerCall,
        tokensPerVerdict: options.sampling.maxTokens,
        limits,
        sharedPromptTokens: limits?.contextWindow !== undefined ? estimateTokens(renderItemContext(item)) + estimateTokens(instructions) : 0,
        criterionPromptTokens: (criterion) => (limits?.contextWindow !== undefined ? estimateTokens(criteriaTail(item, [criterion], alignment)) : 0),
      });
      for (const group of groups) {
        const blocks = criteriaTail(item, group, alignment);
        const request = lazyRequest(
          {
            ...requestFields,
            // Room for every verdict of the group, from the reply schema (not --max-tokens times the group).
            maxTokens: batchedOutputBudget(group, options.sampling.maxTokens),
            output: { name: 'criteria_verdicts', schema: batchedSchemaFor(group, explanation, options.abstain) },
            subject: { item: item.id, criteria: group.map((criterion) => criterion.id) },
          },
          () => [
            { role: 'system', content: instructions },
            { role: 'user', content: `${renderItemContext(item)}\n\n${blocks}` },
          ],
          item,
        );
        tasks.push({
          item,
          criteria: group,
          request,
          keyMaterial: `${digestOf(instructions)}\u0000${shared}\u0000${blocks}`,
          templateVersion,
          decide(reply: JudgeReply): TaskDecision {
            const truncated = truncatedReply(reply);
            if (truncated) return failAll(group, truncated);
            const parsed = extractJson(reply.text);
            if (!parsed.ok) return failAll(group, unparseable(parsed.reason, reply.text));
            const entries = verdictEntries(parsed.value);
            if (!entries) return failAll(group, unparseable('reply has no "verdicts" object', reply.text));
            const decision: TaskDecision = { verdicts: new Map(), errors: new Map() };
            for (const criterion of group) {
              const entry = entries.get(criterion.id);
              if (entry === undefined) {
                decision.errors.set(criterion.id, new RubricateError('JUDGE_UNPARSEABLE', `reply has no verdict for criterion ${criterion.id}`));
                continue;
              }
              const verdict = readVerdict(criterion, entry, options.abstain);
              if (RubricateError.isInstance(verdict)) decision.errors.set(criterion.id, verdict);
              else decision.verdicts.set(criterion.id, verdict);
            }
            return decision;
          },
        });
      }
      return tasks;
    },
  };
}

/** Accepts {"verdicts": {id: v}}, a bare {id: v} map, or a list of {criterion_id, …}. */
function verdictEntries(value: unknown): Map<string, unknown> | undefined {
  const container = isRecord(value) && 'verdicts' in value ? value.verdicts : value;
  if (Array.isArray(container)) {
    const entries = new Map<string, unknown>();
    for (const entry of container) {
      if (isRecord(entry)) {
        const id = entry.criterion_id ?? entry.id;
        if (typeof id === 'string' || typeof id === 'number') entries.set(String(id), entry);
      }
    }
    return entries;
  }
  if (isRecord(container)) return new Map(Object.entries(container));
  return undefined;
}
