/**
 * From paired gradings (original response, perturbed response) to a probe's figures: score
 * drift with a paired bootstrap interval, verdict flip rates, and per-criterion flip counts.
 * The bootstrap unit is the item: an item's variants stay together, so several variants of
 * one item never count as independent evidence.
 */
import { bootstrapIntervals, deriveSeed, resolveBootstrapOptions, type BootstrapOptions, type ConfidenceInterval } from '../../statistics/bootstrap.js';
import { mean, ratio } from '../../statistics/descriptive.js';
import type { ProbeDefinition } from './perturbations.js';

/** One judged criterion, graded on both the original and the perturbed response. */
export interface CriterionPair {
  id: string;
  text: string;
  original: boolean;
  perturbed: boolean;
}

/** One perturbed response of one item, graded. */
export interface VariantObservation {
  /** Position of the item in the probed set (the bootstrap unit). */
  item: number;
  itemId: string;
  variant: string;
  /** The perturbed response was graded without error. */
  ok: boolean;
  originalScore: number | null;
  perturbedScore: number | null;
  /** Judge criteria with a verdict on both responses (empty when `ok` is false). */
  criteria: CriterionPair[];
  /** Deletion: the criterion whose supporting sentence was removed. */
  targetCriterionId?: string;
}

export interface Rate {
  count: number;
  of: number;
  rate: number | null;
  interval: ConfidenceInterval | null;
}

export interface DriftSummary {
  /** Items with a score on the original and at least one perturbed variant. */
  items: number;
  meanOriginal: number | null;
  meanPerturbed: number | null;
  /** Mean over items of (perturbed − original), each item's variants averaged first. */
  mean: number | null;
  interval: ConfidenceInterval | null;
  rose: number;
  fell: number;
  unchanged: number;
}

export interface FlipSummary {
  /** Criterion comparisons (criterion × variant) the rates are over. */
  comparisons: number;
  metToNotMet: Rate;
  notMetToMet: Rate;
  any: Rate;
}

export type Assessment = 'score rises' | 'score falls' | 'no significant change' | 'key criterion flips' | 'verdicts flip, score unchanged' | 'flips to met' | 'occasional flips' | 'no flips' | 'not enough data';

export interface CriterionFlips {
  criterionId: string;
  text: string;
  /** Comparisons where this criterion could flip the way the probe looks for. */
  eligible: number;
  flips: number;
  rate: number;
}

export interface ProbeSummary {
  drift: DriftSummary;
  /** Deletion: flips of the criteria that were not targeted (collateral). Otherwise: every judged criterion. */
  flips: FlipSummary;
  /** Deletion only: targeted criteria that went from met to not met. */
  target?: Rate;
}

export interface ProbeResult extends ProbeSummary {
  probe: ProbeDefinition['name'];
  kind: ProbeDefinition['kind'];
  description: string;
  expected: string;
  assessment: Assessment;
  /** The judge shows the weakness this probe looks for. */
  flagged: boolean;
  variants: { graded: number; failed: number };
  /** Deletion: criteria met by the original for which no sentence shares a content word (not probed). */
  unmatchedCriteria?: number;
  /** Injection: the same figures for each kind of injection. */
  byVariant?: Record<string, ProbeSummary & { assessment: Assessment; flagged: boolean }>;
  /** Per criterion, most flipped first: any flip (spurious), not met → met (injection), targeted flips (deletion). */
  byCriterion: CriterionFlips[];
  perItem: Array<{ id: string; original: number | null; perturbed: number | null; drift: number | null; variants: number; failed: number }>;
}

interface ItemTotals {
  item: number;
  itemId: string;
  original: number | null;
  perturbedSum: number;
  driftSum: number;
  scored: number;
  variants: number;
  failed: number;
  metToNotMet: number;
  metEligible: number;
  notMetToMet: number;
  notMetEligible: number;
  targetFlips: number;
  targetEligible: number;
}

function totalsByItem(observations: readonly VariantObservation[]): ItemTotals[] {
  const byItem = new Map<number, ItemTotals>();
  for (const observation of observations) {
    let totals = byItem.get(observation.item);
    if (!totals) {
      totals = {
        item: observation.item,
        itemId: observation.itemId,
        original: observation.originalScore,
        perturbedSum: 0,
        driftSum: 0,
        scored: 0,
        variants: 0,
        failed: 0,
        metToNotMet: 0,
        metEligible: 0,
        notMetToMet: 0,
        notMetEligible: 0,
        targetFlips: 0,
        targetEligible: 0,
      };
      byItem.set(observation.item, totals);
    }
    totals.variants += 1;
    if (!observation.ok) {
      totals.failed += 1;
      continue;
    }
    if (observation.originalScore !== null && observation.perturbedScore !== null) {
      totals.scored += 1;
      totals.perturbedSum += observation.perturbedScore;
      totals.driftSum += observation.perturbedScore - observation.originalScore;
    }
    for (const criterion of observation.criteria) {
      if (criterion.id === observation.targetCriterionId) {
        totals.targetEligible += 1;
        if (!criterion.perturbed) totals.targetFlips += 1;
        continue;
      }
      if (criterion.original) {
        totals.metEligible += 1;
        if (!criterion.perturbed) totals.metToNotMet += 1;
      } else {
        totals.notMetEligible += 1;
        if (criterion.perturbed) totals.notMetToMet += 1;
      }
    }
  }
  return [...byItem.values()].sort((left, right) => left.item - right.item);
}

const statisticKeys = ['drift', 'metToNotMet', 'notMetToMet', 'any', 'target'] as const;


function summarise(items: readonly ItemTotals[], bootstrap: Required<BootstrapOptions>, withTarget: boolean): ProbeSummary {
  const scoredItems = items.filter((totals) => totals.scored > 0 && totals.original !== null);
  const drifts = items.map((totals) => (totals.scored > 0 && totals.original !== null ? totals.driftSum / totals.scored : null));
  const sum = (select: (totals: ItemTotals) => number) => items.reduce((total, totals) => total + select(totals), 0);

  const intervals = bootstrapIntervals(
    items.length,
    statisticKeys,
    (sample) => {
      let driftTotal = 0;
      let driftCount = 0;
      let metToNotMet = 0;
      let metEligible = 0;
      let notMetToMet = 0;
      let notMetEligible = 0;
      let targetFlips = 0;
      let targetEligible = 0;
      for (let position = 0; position < sample.length; position += 1) {
        const index = sample[position];
        const totals = items[index];
        const drift = drifts[index];
        if (drift !== null) {
          driftTotal += drift;
          driftCount += 1;
        }
        metToNotMet += totals.metToNotMet;
        metEligible += totals.metEligible;
        notMetToMet += totals.notMetToMet;
        notMetEligible += totals.notMetEligible;
        targetFlips += totals.targetFlips;
        targetEligible += totals.targetEligible;
      }
      return {
        drift: driftCount > 0 ? driftTotal / driftCount : null,
        metToNotMet: ratio(metToNotMet, metEligible),
        notMetToMet: ratio(notMetToMet, notMetEligible),
        any: ratio(metToNotMet + notMetToMet, metEligible + notMetEligible),
        target: withTarget ? ratio(targetFlips, targetEligible) : null,
      };
    },
    bootstrap,
  );

  const definedDrifts = drifts.filter((drift): drift is number => drift !== null);
  const meanOf = (values: readonly number[]) => (values.length > 0 ? mean(values) : null);
  const rate = (count: number, of: number, interval: ConfidenceInterval | null): Rate => ({ count, of, rate: ratio(count, of), interval });
  const metToNotMet = sum((totals) => totals.metToNotMet);
  const metEligible = sum((totals) => totals.metEligible);
  const notMetToMet = sum((totals) => totals.notMetToMet);
  const notMetEligible = sum((totals) => totals.notMetEligible);
  const summary: ProbeSummary = {
    drift: {
      items: scoredItems.length,
      meanOriginal: meanOf(scoredItems.map((totals) => totals.original!)),
      meanPerturbed: meanOf(scoredItems.map((totals) => totals.perturbedSum / totals.scored)),
      mean: meanOf(definedDrifts),
      interval: intervals.drift,
      // A tolerance so that float noise in a ratio is not counted as a change.
      rose: definedDrifts.filter((drift) => drift > 1e-9).length,
      fell: definedDrifts.filter((drift) => drift < -1e-9).length,
      unchanged: definedDrifts.filter((drift) => Math.abs(drift) <= 1e-9).length,
    },
    flips: {
      comparisons: metEligible + notMetEligible,
      metToNotMet: rate(metToNotMet, metEligible, intervals.metToNotMet),
      notMetToMet: rate(notMetToMet, notMetEligible, intervals.notMetToMet),
      any: rate(metToNotMet + notMetToMet, metEligible + notMetEligible, intervals.any),
    },
  };
  if (withTarget) summary.target = rate(sum((totals) => totals.targetFlips), sum((totals) => totals.targetEligible), intervals.target);
  return summary;
}

/** Significance means the interval lies entirely on one side of zero. */
function driftAssessment(drift: DriftSummary): Assessment {
  if (drift.mean === null || drift.interval === null) return 'not enough data';
  if (drift.interval.lower > 0) return 'score rises';
  if (drift.interval.upper < 0) return 'score falls';
  return 'no significant change';
}

function injectionAssessment(flips: FlipSummary): Assessment {
  const rate = flips.notMetToMet;
  if (rate.of === 0) return 'not enough data';
  if (rate.interval && rate.interval.lower > 0) return 'flips to met';
  return rate.count > 0 ? 'occasional flips' : 'no flips';
}

function assess(kind: ProbeDefinition['kind'], summary: ProbeSummary): { assessment: Assessment; flagged: boolean } {
  if (kind === 'injection') {
    const assessment = injectionAssessment(summary.flips);
    return { assessment, flagged: assessment === 'flips to met' };
  }
  const assessment = driftAssessment(summary.drift);
  if (kind === 'causal') {
    // The judge read the deletion when the targeted criterion flips significantly, even if the
    // score moves too little to show it (other criteria, few items): not "no change" beside the flips.
    const keyFlips = assessment === 'no significant change' && summary.target?.interval != null && summary.target.interval.lower > 0;
    return keyFlips ? { assessment: 'key criterion flips', flagged: false } : { assessment, flagged: assessment === 'score rises' || assessment === 'no significant change' };
  }
  // Verdicts that change significantly under a change that should not matter are a weakness even
  // when flips both ways leave the mean score where it was: not "no significant change" beside them.
  if (assessment === 'no significant change' && summary.flips.any.interval != null && summary.flips.any.interval.lower > 0) return { assessment: 'verdicts flip, score unchanged', flagged: true };
  return { assessment, flagged: assessment === 'score rises' || assessment === 'score falls' };
}

function criterionFlips(kind: ProbeDefinition['kind'], observations: readonly VariantObservation[]): CriterionFlips[] {
  const byCriterion = new Map<string, CriterionFlips>();
  for (const observation of observations) {
    if (!observation.ok) continue;
    for (const criterion of observation.criteria) {
      let eligible: boolean;
      let flipped: boolean;
      if (kind === 'causal') {
        eligible = criterion.id === observation.targetCriterionId;
        flipped = !criterion.perturbed;
      } else if (kind === 'injection') {
        eligible = !criterion.original;
        flipped = criterion.perturbed;
      } else {
        eligible = true;
        flipped = criterion.original !== criterion.perturbed;
      }
      if (!eligible) continue;
      let entry = byCriterion.get(criterion.id);
      if (!entry) {
        entry = { criterionId: criterion.id, text: criterion.text, eligible: 0, flips: 0, rate: 0 };
        byCriterion.set(criterion.id, entry);
      }
      entry.eligible += 1;
      if (flipped) entry.flips += 1;
    }
  }
  const entries = [...byCriterion.values()];
  for (const entry of entries) entry.rate = entry.flips / entry.eligible;
  return entries.sort((left, right) => right.flips - left.flips || right.rate - left.rate || (left.criterionId < right.criterionId ? -1 : left.criterionId > right.criterionId ? 1 : 0));
}

/**
 * Figures of one probe from its graded variants. `bootstrap.seed` is the run's seed; each
 * probe (and each injection variant) resamples from its own stream derived from it.
 */
export function analyseProbe(definition: ProbeDefinition, observations: readonly VariantObservation[], bootstrap: BootstrapOptions = {}, extra: { unmatchedCriteria?: number } = {}): ProbeResult {
  const resolved = resolveBootstrapOptions(bootstrap);
  const withTarget = definition.kind === 'causal';
  const items = totalsByItem(observations);
  const summary = summarise(items, { ...resolved, seed: deriveSeed(resolved.seed, `probe=${definition.name}`) }, withTarget);
  const result: ProbeResult = {
    probe: definition.name,
    kind: definition.kind,
    description: definition.description,
    expected: definition.expected,
    ...assess(definition.kind, summary),
    variants: { graded: observations.filter((observation) => observation.ok).length, failed: observations.filter((observation) => !observation.ok).length },
    ...(extra.unmatchedCriteria !== undefined ? { unmatchedCriteria: extra.unmatchedCriteria } : {}),
    ...summary,
    byCriterion: criterionFlips(definition.kind, observations),
    perItem: items.map((totals) => ({
      id: totals.itemId,
      original: totals.original,
      perturbed: totals.scored > 0 ? totals.perturbedSum / totals.scored : null,
      drift: totals.scored > 0 && totals.original !== null ? totals.driftSum / totals.scored : null,
      variants: totals.variants,
      failed: totals.failed,
    })),
  };
  const variantNames = [...new Set(observations.map((observation) => observation.variant))];
  if (definition.kind === 'injection' && variantNames.length > 1) {
    result.byVariant = {};
    for (const variant of variantNames) {
      const subset = totalsByItem(observations.filter((observation) => observation.variant === variant));
      const variantSummary = summarise(subset, { ...resolved, seed: deriveSeed(resolved.seed, `probe=${definition.name}/${variant}`) }, false);
      result.byVariant[variant] = { ...assess(definition.kind, variantSummary), ...variantSummary };
    }
  }
  return result;
}
