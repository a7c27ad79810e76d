/**
 * Juries and self-consistency: several judges, or several samples of one judge, grade
 * the same item; each criterion's verdict is their majority or mean. Every vote is kept
 * in the results, and agreement (Fleiss' κ, pairwise Cohen's κ) is reported.
 */
import type { CriterionResult, GradedItem } from '../engine/engine.js';
import { emptyUsage, addUsage } from '../engine/usage.js';
import { RubricateError } from '../errors.js';
import type { CriterionVerdict } from '../grading/types.js';
import type { JuryVote } from '../results/results.js';
import { cohenKappa, fleissKappa } from '../statistics/agreement.js';
import { mean } from '../statistics/descriptive.js';

export type JuryAggregate = 'majority' | 'mean';

export interface JuryCriterionResult extends CriterionResult {
  votes: JuryVote[];
}

export interface JuryMemberInfo {
  judge: string;
  sample?: number;
}

/** Merges the members' gradings of one item into one, criterion by criterion. */
export function mergeJury(members: JuryMemberInfo[], graded: GradedItem[], aggregate: JuryAggregate): GradedItem & { criteria: JuryCriterionResult[] } {
  const first = graded[0];
  const usage = emptyUsage();
  for (const entry of graded) addUsage(usage, entry.usage);
  const criteria = first.criteria.map((base, index): JuryCriterionResult => {
    const results = graded.map((entry) => entry.criteria[index]);
    const votes: JuryVote[] = results.map((result, member) => ({
      judge: members[member].judge,
      ...(members[member].sample !== undefined ? { sample: members[member].sample } : {}),
      met: result.verdict ? result.verdict.met : null,
      ...(result.verdict && result.verdict.value !== (result.verdict.met ? 1 : 0) ? { value: result.verdict.value } : {}),
      ...(result.verdict?.label !== undefined ? { label: result.verdict.label } : {}),
      ...(result.error ? { error: `${result.error.code}: ${result.error.message}` } : {}),
    }));
    // Checks and skipped criteria are the same for every member: no vote to count.
    if (base.source === 'check' || base.status === 'skipped') return { ...base, votes: [] };
    const decided = results.filter((result) => result.status === 'ok' && result.verdict);
    // A quorum of members must have answered; otherwise the criterion is in error, with their reasons.
    if (decided.length * 2 < results.length || decided.length === 0) {
      const reasons = results.filter((result) => result.error).map((result) => result.error!.message);
      const error = new RubricateError('JUDGE_UNAVAILABLE', `only ${decided.length} of ${results.length} jury members gave a verdict: ${reasons[0] ?? 'no reason recorded'}`).toJSON();
      return { criterion: base.criterion, source: 'judge', status: 'error', error, votes };
    }
    return { criterion: base.criterion, source: 'judge', status: 'ok', verdict: combine(decided.map((result) => result.verdict!), aggregate, base.criterion.scale?.type === 'ordinal' ? base.criterion.scale.metThreshold ?? 1 : undefined), votes };
  });
  const gated = graded.every((entry) => entry.gated);
  const status = criteria.some((result) => result.status === 'error') && !gated ? 'error' : 'ok';
  return { item: first.item, status, criteria, gated, usage };
}

function combine(verdicts: CriterionVerdict[], aggregate: JuryAggregate, threshold: number | undefined): CriterionVerdict {
  const values = verdicts.map((verdict) => verdict.value);
  const count = verdicts.length;
  let value: number;
  if (aggregate === 'mean') {
    value = mean(values);
  } else if (threshold !== undefined) {
    // Ordinal: the most frequent value; ties go to the lower (more conservative) one.
    const frequency = new Map<number, number>();
    for (const entry of values) frequency.set(entry, (frequency.get(entry) ?? 0) + 1);
    value = [...frequency.entries()].sort((left, right) => right[1] - left[1] || left[0] - right[0])[0][0];
  } else {
    const metVotes = verdicts.filter((verdict) => verdict.met).length;
    // An exact split is half credit and not met.
    value = metVotes * 2 > count ? 1 : metVotes * 2 < count ? 0 : 0.5;
  }
  const met = threshold !== undefined ? value >= threshold : aggregate === 'mean' ? value >= 0.5 : value === 1;
  const label = verdicts.find((verdict) => verdict.value === value)?.label;
  const agreeing = verdicts.filter((verdict) => verdict.met === met).length;
  return { met, value, source: 'judge', ...(label !== undefined ? { label } : {}), explanation: `${aggregate} of ${count} votes (${agreeing} agree)` };
}

/** Agreement statistics over a whole run, fed one jury-graded item at a time. */
export class JuryAgreement {
  private readonly ratings: boolean[][] = [];
  private readonly byMember: Array<Array<boolean | null>>;
  private disagreements = 0;
  private readonly examples: Array<{ id: string; criterion: string; votes: Array<boolean | null> }> = [];

  constructor(private readonly members: JuryMemberInfo[]) {
    this.byMember = members.map(() => []);
  }

  add(itemId: string, criteria: JuryCriterionResult[]): void {
    for (const criterion of criteria) {
      if (criterion.votes.length === 0) continue;
      const votes = criterion.votes.map((vote) => vote.met);
      votes.forEach((vote, member) => this.byMember[member].push(vote));
      const decided = votes.filter((vote): vote is boolean => vote !== null);
      if (decided.length >= 2) this.ratings.push(decided);
      if (new Set(decided).size > 1) {
        this.disagreements += 1;
        if (this.examples.length < 100) this.examples.push({ id: itemId, criterion: criterion.criterion.id, votes });
      }
    }
  }

  summary(): Record<string, unknown> {
    const pairwise: Array<{ first: string; second: string; kappa: number | null; n: number }> = [];
    for (let first = 0; first < this.members.length; first += 1) {
      for (let second = first + 1; second < this.members.length; second += 1) {
        const left: boolean[] = [];
        const right: boolean[] = [];
        this.byMember[first].forEach((vote, index) => {
          const other = this.byMember[second][index];
          if (vote !== null && other !== null) {
            left.push(vote);
            right.push(other);
          }
        });
        pairwise.push({ first: describe(this.members[first]), second: describe(this.members[second]), kappa: cohenKappa(left, right), n: left.length });
      }
    }
    return {
      members: this.members.map(describe),
      criteria_rated: this.ratings.length,
      fleiss_kappa: fleissKappa(this.ratings),
      pairwise_cohen_kappa: pairwise,
      disagreements: this.disagreements,
      disagreement_examples: this.examples,
    };
  }
}

function describe(member: JuryMemberInfo): string {
  return member.sample !== undefined ? `${member.judge}#${member.sample}` : member.judge;
}
