/**
 * Cascades: cheap judges first. Deterministic checks run as always; every other criterion is
 * decided by the run's judge (or jury), and handed to the next judge of the cascade only when the
 * escalation rule says so: its P(met) is inside the band, the jury's votes disagree, the judge
 * abstained (`cannot_assess`), or it failed. The last judge's verdict stands whatever it is. Every
 * criterion records the judge that decided it and each escalation before, with its reason; the
 * run's tally counts them. Each judge's calls are its own (its own cache keys and provenance).
 */
import type { GradedItem } from '../engine/engine.js';
import { addUsage, emptyUsage } from '../engine/usage.js';
import { RubricateError } from '../errors.js';
import type { CascadeDecision, CriterionResult } from '../grading/types.js';
import type { Judge } from '../judges/types.js';
import type { Item } from '../rubric/schema.js';
import type { AbstainPolicy, EscalationReason } from '../spec/run-spec.js';
import { dictionary } from '../util/dictionary.js';
import type { JuryCriterionResult } from './jury.js';

export interface CascadeOptions {
  /** The judges after the grader's own, in the order criteria escalate to them. */
  judges: Judge[];
  /** P(met) inside [low, high] escalates (needs probability verdicts). */
  band?: readonly [number, number];
  /** Default: every reason that applies to the run (the band when given, disagreement for a jury, abstain, error). */
  escalateOn?: readonly EscalationReason[];
}

/** What the run offers the rule: probability verdicts (for a band) and a jury (for disagreement). */
export interface CascadeContext {
  probabilityVerdicts: boolean;
  jury: boolean;
}

export interface EscalationRule {
  reasons: ReadonlySet<EscalationReason>;
  band?: readonly [number, number];
}

/** The rule of a run, refusing a reason that cannot apply to it (a band without P(met), disagreement without a jury). */
export function escalationRule(options: Pick<CascadeOptions, 'band' | 'escalateOn'>, context: CascadeContext): EscalationRule {
  if (options.band && !context.probabilityVerdicts) {
    throw new RubricateError('CONFIG_INVALID', '--escalate-band compares the first judge\'s P(met) with the band: add --verdict probability (or expected-score)', { field: 'escalate-band' });
  }
  const given = options.escalateOn;
  if (given?.includes('band') && !options.band) throw new RubricateError('CONFIG_INVALID', '--escalate-on band needs the band: add --escalate-band LOW,HIGH', { field: 'escalate-on' });
  if (given?.includes('disagreement') && !context.jury) throw new RubricateError('CONFIG_INVALID', '--escalate-on disagreement needs a jury as the first judge (several --judge, or --samples)', { field: 'escalate-on' });
  const reasons = new Set<EscalationReason>(given ?? [...(options.band ? ['band' as const] : []), ...(context.jury ? ['disagreement' as const] : []), 'abstain', 'error']);
  return { reasons, ...(options.band ? { band: options.band } : {}) };
}

/**
 * A cascade against the rest of the run, before anything is built: it needs the run's own judge
 * first, hands abstentions on (so `--abstain fail` cannot zero an item on one), escalates single
 * criteria of one response (no group mode), and its band and reasons need a cascade judge.
 */
export function refuseCascadeConflicts(cascade: CascadeOptions | undefined, run: { judges: number; abstain: AbstainPolicy | undefined; groupMode: string | undefined }): void {
  if (!cascade) return;
  if (cascade.judges.length === 0) {
    if (cascade.band || cascade.escalateOn) throw new RubricateError('CONFIG_INVALID', `${cascade.band ? '--escalate-band' : '--escalate-on'} sets when a criterion goes to the next judge of a cascade: add --cascade-judge SPEC`, { field: cascade.band ? 'escalate-band' : 'escalate-on' });
    return;
  }
  if (run.judges === 0) throw new RubricateError('CONFIG_INVALID', 'a cascade starts with the run\'s own judge: name it with --judge (not none)', { field: 'cascade-judge' });
  // `--abstain fail` zeroes the item on the first judge's abstention, which a cascade hands on to the next judge.
  if (run.abstain === 'fail') throw new RubricateError('CONFIG_INVALID', '--abstain fail scores an item 0 when the judge abstains, but a cascade hands the abstention to its next judge: use another --abstain policy', { field: 'abstain' });
  if (run.groupMode) throw new RubricateError('CONFIG_INVALID', `--cascade-judge escalates single criteria of one response, which --mode ${run.groupMode} grades together with the group's other responses: grade per item for a cascade`, { field: 'cascade-judge' });
}

/** P(met) the band is compared with: the judge's, or a jury's combined value on a yes/no criterion. */
function probabilityOf(result: CriterionResult): number | undefined {
  const verdict = result.verdict;
  if (!verdict || result.criterion.scale?.type === 'ordinal') return undefined;
  if (verdict.probability !== undefined) return verdict.probability;
  return (result as JuryCriterionResult).votes?.length ? verdict.value : undefined;
}

/** Why a criterion escalates under the rule, if it does (checks and gated criteria never do). */
export function escalationOf(result: CriterionResult, rule: EscalationRule): { reason: EscalationReason; probability?: number } | undefined {
  if (result.source !== 'judge' || result.skipReason === 'gated') return undefined;
  if (result.status === 'error') return rule.reasons.has('error') ? { reason: 'error' } : undefined;
  if (result.verdict?.cannotAssess) return rule.reasons.has('abstain') ? { reason: 'abstain' } : undefined;
  const votes = (result as JuryCriterionResult).votes ?? [];
  if (rule.reasons.has('disagreement') && new Set(votes.filter((vote) => vote.met !== null).map((vote) => vote.met)).size > 1) return { reason: 'disagreement' };
  const probability = probabilityOf(result);
  if (rule.band && rule.reasons.has('band') && probability !== undefined && probability >= rule.band[0] && probability <= rule.band[1]) return { reason: 'band', probability };
  return undefined;
}

/** One judge of a cascade: its name in results, and how it grades an item. */
export interface CascadeStage {
  judge: string;
  grade(item: Item): Promise<GradedItem>;
}

/** Escalations and decisions over a run, for the run summary. */
export class CascadeTally {
  private readonly decidedBy = dictionary<number>();
  private readonly escalations = dictionary<Record<string, number>>();

  add(decision: CascadeDecision): void {
    this.decidedBy[decision.decidedBy] = (this.decidedBy[decision.decidedBy] ?? 0) + 1;
    for (const escalation of decision.escalations) {
      const byReason = (this.escalations[escalation.judge] ??= dictionary<number>());
      byReason[escalation.reason] = (byReason[escalation.reason] ?? 0) + 1;
    }
  }

  /** Criteria decided by each judge, and criteria each judge handed on, by reason. */
  summary(): { decided_by: Record<string, number>; escalated_from: Record<string, Record<string, number>> } {
    return { decided_by: this.decidedBy, escalated_from: this.escalations };
  }
}

/**
 * An item through the stages: the first grades every criterion; each later one grades the
 * criteria the one before handed on. A rubric with a hard-rule gate is refused: which criteria a
 * gate spares depends on verdicts a later judge may overturn.
 */
export async function gradeInCascade(item: Item, stages: readonly CascadeStage[], rule: EscalationRule, tally?: CascadeTally): Promise<GradedItem> {
  if (item.rubric.gate) throw new RubricateError('CONFIG_INVALID', `item ${item.id}: a cascade cannot decide a rubric with a hard-rule gate (a later judge may overturn the hard rule that gated it); grade it without --cascade-judge`, { field: 'cascade-judge' });
  const first = await stages[0].grade(item);
  const results = new Map(first.criteria.map((result) => [result.criterion.id, result]));
  const decisions = new Map<string, CascadeDecision>();
  for (const result of first.criteria) if (result.source === 'judge') decisions.set(result.criterion.id, { decidedBy: stages[0].judge, escalations: [] });
  const usage = emptyUsage();
  addUsage(usage, first.usage);
  let fromStore = first.fromStore === true;
  const calls = [...(first.calls ?? [])];
  let pending = first.criteria;
  for (let stage = 1; stage < stages.length; stage += 1) {
    const escalated = pending.flatMap((result) => {
      const why = escalationOf(result, rule);
      return why ? [{ result, why }] : [];
    });
    if (escalated.length === 0) break;
    for (const { result, why } of escalated) decisions.get(result.criterion.id)!.escalations.push({ judge: stages[stage - 1].judge, reason: why.reason, ...(why.probability !== undefined ? { probability: why.probability } : {}) });
    const graded = await stages[stage].grade({ ...item, rubric: { ...item.rubric, criteria: escalated.map(({ result }) => result.criterion) } });
    addUsage(usage, graded.usage);
    fromStore &&= graded.fromStore === true;
    if (graded.calls) calls.push(...graded.calls);
    for (const result of graded.criteria) {
      results.set(result.criterion.id, result);
      decisions.get(result.criterion.id)!.decidedBy = stages[stage].judge;
    }
    pending = graded.criteria;
  }
  const criteria = item.rubric.criteria.map((criterion): CriterionResult => {
    const result = results.get(criterion.id)!;
    const decision = decisions.get(criterion.id);
    if (!decision) return result;
    tally?.add(decision);
    return { ...result, cascade: decision };
  });
  return { item, status: criteria.some((result) => result.status === 'error') ? 'error' : 'ok', criteria, gated: false, usage, ...(fromStore ? { fromStore } : {}), ...(first.calls ? { calls } : {}) };
}
