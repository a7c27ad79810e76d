/**
 * What the protocol adapters (R3, Selene, Lynx) share: one call per criterion in the judge's own
 * layout, and replies read strictly in the judge's own format. A reply that does not follow the
 * format exactly (another key, a score off the scale, two answers) is JUDGE_UNPARSEABLE: asked
 * again, then reported, never scored.
 */
import { RubricateError } from '../../errors.js';
import type { JudgeReply, JudgeRequest } from '../../judges/types.js';
import type { Criterion, Item, PairLabel } from '../../rubric/schema.js';
import { safeParseJson } from '../../util/json.js';
import { isRecord } from '../../util/is-record.js';
import { comparisonOf, pairOfItem } from '../pairwise.js';
import { duplicateJsonKey, finalAnswerText, unparseable } from '../parse.js';
import { fiveLevels } from '../prometheus.js';
import type { CriterionVerdict, GradingStrategy, JudgeTask, SamplingOptions, TaskDecision } from '../types.js';
import { choiceValue } from '../verdicts.js';
import { requestSampling } from '../sampling.js';

export type ProtocolParse<T> = { ok: true; result: T; explanation: string } | { ok: false; reason: string };

/** What a protocol's absolute grading needs of a criterion: a 1–5 scale with described levels, or a binary criterion. */
export type CriterionShape = { kind: 'five'; levels: readonly string[] } | { kind: 'binary' };

export interface ProtocolOptions {
  sampling: SamplingOptions;
}

/** The protocol's prompt and reply reader for one criterion of an item. */
export interface AbsoluteLayout {
  protocol: string;
  templateVersion: string;
  /** The judge answers yes or no only (criteria with a scale are refused). */
  binaryOnly?: true;
  /** The user message (these judges take no system message), or why the item cannot be graded this way. */
  prompt(item: Item, criterion: Criterion, shape: CriterionShape): string;
  parse(text: string, shape: CriterionShape): ProtocolParse<number | boolean>;
}

export interface RelativeLayout {
  protocol: string;
  templateVersion: string;
  prompt(item: Item, criterionText: string, first: string, second: string): string;
  /** `first` or `second`: which shown response the judge prefers. */
  parse(text: string): ProtocolParse<'first' | 'second'>;
}

function requestOf(options: ProtocolOptions, content: string): JudgeRequest {
  return {
    messages: [{ role: 'user', content }],
    ...requestSampling(options.sampling),
  };
}

function fail(criterion: Criterion, error: RubricateError): TaskDecision {
  return { verdicts: new Map(), errors: new Map([[criterion.id, error]]) };
}

function decided(criterion: Criterion, verdict: CriterionVerdict): TaskDecision {
  return { verdicts: new Map([[criterion.id, verdict]]), errors: new Map() };
}

/** A reply cut off by its token budget is retried: a partial reply is never read. */
function cutOff(reply: JudgeReply): RubricateError | undefined {
  return reply.finishReason === 'length' ? unparseable('reply cut off at the max-tokens limit (raise --max-tokens)', reply.text) : undefined;
}

/** The shape a protocol grades a criterion in, or CONFIG_INVALID naming the criterion. */
function shapeOf(layout: AbsoluteLayout, item: Item, criterion: Criterion): CriterionShape {
  if (criterion.scale?.type !== 'ordinal') return { kind: 'binary' };
  const refuse = (why: string) => new RubricateError('CONFIG_INVALID', `--judge-protocol ${layout.protocol} cannot grade criterion ${criterion.id} of item ${item.id}: ${why}`, { field: 'judge-protocol' });
  if (layout.binaryOnly) throw refuse('it answers yes or no, and this criterion has a scale');
  const levels = fiveLevels(criterion);
  if (typeof levels === 'string') throw refuse(`${levels}, or no scale (a yes/no criterion)`);
  return { kind: 'five', levels };
}

/** Absolute grading in a protocol's layout: one call per criterion, its verdict read from the protocol's reply. */
export function createAbsoluteProtocolStrategy(layout: AbsoluteLayout, options: ProtocolOptions): GradingStrategy {
  return {
    name: `${layout.protocol}-absolute`,
    templateVersion: layout.templateVersion,
    plan(item: Item, criteria: Criterion[]): JudgeTask[] {
      return criteria.map((criterion) => {
        const shape = shapeOf(layout, item, criterion);
        return {
          item,
          criteria: [criterion],
          request: requestOf(options, layout.prompt(item, criterion, shape)),
          templateVersion: layout.templateVersion,
          decide(reply: JudgeReply): TaskDecision {
            const truncated = cutOff(reply);
            if (truncated) return fail(criterion, truncated);
            const parsed = layout.parse(reply.text, shape);
            if (!parsed.ok) return fail(criterion, unparseable(parsed.reason, reply.text));
            const explanation = parsed.explanation ? { explanation: parsed.explanation } : {};
            if (typeof parsed.result === 'boolean') return decided(criterion, { met: parsed.result, value: parsed.result ? 1 : 0, source: 'judge', ...explanation });
            const scale = criterion.scale as Extract<NonNullable<Criterion['scale']>, { type: 'ordinal' }>;
            const index = parsed.result - 1;
            const value = choiceValue(scale.choices, index);
            return decided(criterion, { met: value >= (scale.metThreshold ?? 1), value, label: scale.choices[index].label, source: 'judge', ...explanation });
          },
        };
      });
    },
  };
}

/** Pairwise grading for `compare` in a protocol's layout: the pairwise strategy's items, no ties (these judges have none). */
export function createRelativeProtocolStrategy(layout: RelativeLayout, options: ProtocolOptions): GradingStrategy {
  return {
    name: `${layout.protocol}-relative`,
    templateVersion: layout.templateVersion,
    plan(item: Item, criteria: Criterion[]): JudgeTask[] {
      const pair = pairOfItem(item, `${layout.protocol} relative strategy`);
      return criteria.map((criterion) => {
        const { order } = comparisonOf(criterion);
        const [first, second] = order === 'ab' ? [pair.responseA, pair.responseB] : [pair.responseB, pair.responseA];
        return {
          item,
          criteria: [criterion],
          request: requestOf(options, layout.prompt(item, criterion.text, first, second)),
          templateVersion: layout.templateVersion,
          decide(reply: JudgeReply): TaskDecision {
            const truncated = cutOff(reply);
            if (truncated) return fail(criterion, truncated);
            const parsed = layout.parse(reply.text);
            if (!parsed.ok) return fail(criterion, unparseable(parsed.reason, reply.text));
            // Back to the pair's own labelling: A is whichever response was shown first in order "ab".
            const label: PairLabel = (parsed.result === 'first') === (order === 'ab') ? 'A' : 'B';
            return decided(criterion, { met: label === 'A', value: label === 'A' ? 1 : 0, label, source: 'judge', ...(parsed.explanation ? { explanation: parsed.explanation } : {}) });
          },
        };
      });
    },
  };
}

/**
 * The one JSON object a reply holds, read strictly: after any thinking, the whole answer is the
 * object, or one ```json fence holding it. No repair, no object picked out of prose; a key given
 * twice is refused (JSON.parse would keep the last).
 */
export function strictJsonObject(text: string): { ok: true; value: Record<string, unknown> } | { ok: false; reason: string } {
  let body = finalAnswerText(text).trim();
  const fence = /^```(?:json)?[ \t]*\n([\s\S]*?)\n?```$/.exec(body);
  if (fence) body = fence[1].trim();
  if (body === '') return { ok: false, reason: 'empty reply' };
  const parsed = safeParseJson(body);
  if (!parsed.ok) return { ok: false, reason: `the reply is not one JSON object (${parsed.error})` };
  if (!isRecord(parsed.value)) return { ok: false, reason: 'the reply is JSON but not an object' };
  const repeated = duplicateJsonKey(body);
  if (repeated !== undefined) return { ok: false, reason: `ambiguous reply: the key ${JSON.stringify(repeated)} appears twice` };
  return { ok: true, value: parsed.value };
}

/** The keys of an object are exactly `keys` (the protocol's schema forbids any other). */
export function exactKeys(value: Record<string, unknown>, keys: readonly string[]): string | undefined {
  const extra = Object.keys(value).filter((key) => !keys.includes(key));
  if (extra.length > 0) return `unexpected key ${JSON.stringify(extra[0])} (the format has ${keys.map((key) => JSON.stringify(key)).join(', ')})`;
  const missing = keys.find((key) => !(key in value));
  return missing === undefined ? undefined : `missing ${JSON.stringify(missing)}`;
}
