/**
 * Calibrating a cascade's band on labelled results: the cheap judge's results (with P(met)), the
 * strong judge's results on the same items, and labels. Items are split, by a seeded hash of their
 * id, into a calibration part and a held-out part (an item's criteria stay together, so the band is
 * never chosen on the labels it is tested on). On the calibration part each candidate band
 * [low, high] is simulated: a criterion whose cheap P(met) is inside takes the strong verdict, the
 * others keep the cheap one. The band chosen reaches the target agreement with the labels with the
 * fewest escalations (ties: the higher agreement, then the narrower band, then the lower one); when
 * none reaches it, the band of the highest agreement is reported with `target_met: false`. The
 * held-out part then gives accuracy and cost of the cheap judge alone, the strong judge alone and
 * the cascade at that band.
 *
 * Candidate bounds are the distinct P(met) values of the calibration part (their percentiles
 * when there are more than 200). A criterion's calls and cost are its item's, shared equally by
 * the item's judged criteria (a results line gives usage per item).
 */
import { RubricateError } from '../errors.js';
import { costOf, priceFor, type ModelPrice } from '../engine/usage.js';
import { readResults, type ResultRecord } from '../results/results.js';
import { round } from '../statistics/descriptive.js';
import { sha256Hex } from '../util/hash.js';
import type { LabelIndex } from './labels.js';

/** One judged criterion of the cheap run, with what the strong run and the labels say of it. */
export interface CalibrationUnit {
  item: string;
  criterion: string;
  probability: number;
  cheapMet: boolean;
  strongMet?: boolean;
  label?: boolean;
  cheapCalls: number;
  cheapCost: number | null;
  /** The cheap run's tokens for this criterion (its share of its item's). */
  cheapTokens: { input: number; output: number };
  strongCalls?: number;
  strongCost?: number | null;
}

interface JudgedCriterion {
  met: boolean;
  probability?: number;
  calls: number;
  cost: number | null;
  tokens: { input: number; output: number };
}

/** Every ok judged criterion of a results file, by item and criterion id, with its share of the item's usage and cost. */
export async function judgedCriteria(file: string, prices: Readonly<Record<string, ModelPrice>>): Promise<{ byKey: Map<string, JudgedCriterion>; model: string | undefined }> {
  const byKey = new Map<string, JudgedCriterion>();
  let model: string | undefined;
  for await (const read of readResults(file)) {
    if (read.kind !== 'result') throw read.error;
    const record: ResultRecord = read.record;
    model ??= record.judge?.model;
    const judged = record.criteria.filter((criterion) => criterion.source === 'judge');
    if (judged.length === 0) continue;
    const cost = record.usage && record.judge ? costOf(record.usage, priceFor(record.judge.model, prices)) : null;
    const calls = (record.usage?.calls ?? 0) + (record.usage?.cache_hits ?? 0);
    for (const criterion of judged) {
      if (criterion.status !== 'ok' || criterion.met === null) continue;
      byKey.set(`${record.id}\u0000${criterion.id}`, {
        met: criterion.met,
        ...(criterion.probability !== undefined ? { probability: criterion.probability } : {}),
        calls: calls / judged.length,
        cost: cost === null ? null : cost / judged.length,
        tokens: { input: (record.usage?.prompt_tokens ?? 0) / judged.length, output: (record.usage?.completion_tokens ?? 0) / judged.length },
      });
    }
  }
  return { byKey, model };
}

/** The label of most raters; none on a tie. */
function majority(labels: readonly boolean[]): boolean | undefined {
  const met = labels.filter(Boolean).length;
  return met * 2 === labels.length ? undefined : met * 2 > labels.length;
}

export interface JoinCounts {
  cheapCriteria: number;
  withoutProbability: number;
  withoutStrong: number;
  withoutLabel: number;
  tiedLabels: number;
  units: number;
}

/** The units: cheap criteria with a P(met), joined with the strong verdict and the majority label where given. */
export function joinUnits(cheap: Map<string, JudgedCriterion>, strong: Map<string, JudgedCriterion> | undefined, labels: LabelIndex | undefined): { units: CalibrationUnit[]; counts: JoinCounts } {
  const counts: JoinCounts = { cheapCriteria: cheap.size, withoutProbability: 0, withoutStrong: 0, withoutLabel: 0, tiedLabels: 0, units: 0 };
  const units: CalibrationUnit[] = [];
  for (const [key, entry] of cheap) {
    if (entry.probability === undefined) {
      counts.withoutProbability += 1;
      continue;
    }
    const [item, criterion] = key.split('\u0000');
    const unit: CalibrationUnit = { item, criterion, probability: entry.probability, cheapMet: entry.met, cheapCalls: entry.calls, cheapCost: entry.cost, cheapTokens: entry.tokens };
    if (strong) {
      const other = strong.get(key);
      if (!other) {
        counts.withoutStrong += 1;
        continue;
      }
      Object.assign(unit, { strongMet: other.met, strongCalls: other.calls, strongCost: other.cost });
    }
    if (labels) {
      const raters = labels.byItem.get(item)?.get(criterion);
      if (!raters) {
        counts.withoutLabel += 1;
        continue;
      }
      const label = majority(raters);
      if (label === undefined) {
        counts.tiedLabels += 1;
        continue;
      }
      unit.label = label;
    }
    units.push(unit);
  }
  counts.units = units.length;
  return { units, counts };
}

/** Whether an item is held out: a seeded hash of its id below the fraction. */
export function isHeldOut(item: string, fraction: number, seed: number): boolean {
  return Number.parseInt(sha256Hex(`rubricate-holdout\u0000${seed}\u0000${item}`).slice(0, 8), 16) / 0x1_0000_0000 < fraction;
}

export type Band = readonly [number, number] | null;

const inside = (band: Band, probability: number) => band !== null && probability >= band[0] && probability <= band[1];

/** What the cascade decides for a unit at a band: the strong verdict inside it, the cheap one outside. */
function cascadeMet(unit: CalibrationUnit, band: Band): boolean {
  return inside(band, unit.probability) ? unit.strongMet! : unit.cheapMet;
}

/** Candidate bounds: the distinct P(met) values, or their percentiles when there are more than 200. */
function candidateBounds(units: readonly CalibrationUnit[]): number[] {
  const distinct = [...new Set(units.map((unit) => unit.probability))].sort((left, right) => left - right);
  if (distinct.length <= 200) return distinct;
  return [...new Set(Array.from({ length: 101 }, (_, index) => distinct[Math.round((index / 100) * (distinct.length - 1))]))];
}

export interface BandChoice {
  band: Band;
  agreement: number;
  escalations: number;
  targetMet: boolean;
  candidates: number;
}

/** The band of fewest escalations reaching the target on `units` (see the module's rule). */
export function chooseBand(units: readonly CalibrationUnit[], target: number): BandChoice {
  if (units.length === 0) throw new RubricateError('INPUT_INVALID', 'no labelled criterion with a P(met) and a strong verdict to calibrate on');
  const sorted = [...units].sort((left, right) => left.probability - right.probability);
  // gain[i]: correct answers won (or lost) by escalating the i-th lowest unit.
  const gainPrefix = [0];
  let cheapCorrect = 0;
  for (const unit of sorted) {
    cheapCorrect += unit.cheapMet === unit.label ? 1 : 0;
    gainPrefix.push(gainPrefix.at(-1)! + (unit.strongMet === unit.label ? 1 : 0) - (unit.cheapMet === unit.label ? 1 : 0));
  }
  /** The first sorted index whose P(met) is above `value` (`inclusive`: at least `value`). */
  const firstFrom = (value: number, inclusive: boolean) => {
    let low = 0;
    let high = sorted.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (inclusive ? sorted[middle].probability < value : sorted[middle].probability <= value) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  const bounds = candidateBounds(sorted);
  const starts = bounds.map((bound) => firstFrom(bound, true));
  const ends = bounds.map((bound) => firstFrom(bound, false));
  const n = sorted.length;
  let best: BandChoice = { band: null, agreement: cheapCorrect / n, escalations: 0, targetMet: cheapCorrect / n >= target, candidates: 1 + (bounds.length * (bounds.length + 1)) / 2 };
  const better = (candidate: Omit<BandChoice, 'candidates'>): boolean => {
    if (candidate.targetMet !== best.targetMet) return candidate.targetMet;
    if (candidate.targetMet) {
      if (candidate.escalations !== best.escalations) return candidate.escalations < best.escalations;
      if (candidate.agreement !== best.agreement) return candidate.agreement > best.agreement;
    } else {
      if (candidate.agreement !== best.agreement) return candidate.agreement > best.agreement;
      if (candidate.escalations !== best.escalations) return candidate.escalations < best.escalations;
    }
    const width = (band: Band) => (band === null ? -1 : band[1] - band[0]);
    if (width(candidate.band) !== width(best.band)) return width(candidate.band) < width(best.band);
    return candidate.band !== null && best.band !== null && candidate.band[0] < best.band[0];
  };
  for (let low = 0; low < bounds.length; low += 1) {
    for (let high = low; high < bounds.length; high += 1) {
      const from = starts[low];
      const to = ends[high];
      const agreement = (cheapCorrect + gainPrefix[to] - gainPrefix[from]) / n;
      const candidate = { band: [bounds[low], bounds[high]] as const, agreement, escalations: to - from, targetMet: agreement >= target };
      if (better(candidate)) best = { ...candidate, candidates: best.candidates };
    }
  }
  return best;
}

const sum = (values: ReadonlyArray<number | null | undefined>): number | null => (values.some((value) => value === null || value === undefined) ? null : round(values.reduce<number>((total, value) => total + value!, 0)));

/** Accuracy and cost on units of the cheap judge alone, the strong judge alone and the cascade at a band. */
export function evaluateBand(units: readonly CalibrationUnit[], band: Band) {
  const n = units.length;
  const accuracy = (met: (unit: CalibrationUnit) => boolean) => (n === 0 ? null : units.filter((unit) => met(unit) === unit.label).length / n);
  const escalated = units.filter((unit) => inside(band, unit.probability));
  return {
    criteria: n,
    escalated: escalated.length,
    escalation_rate: n === 0 ? null : escalated.length / n,
    accuracy: { cheap_alone: accuracy((unit) => unit.cheapMet), strong_alone: accuracy((unit) => unit.strongMet!), cascade: accuracy((unit) => cascadeMet(unit, band)) },
    calls: {
      cheap_alone: round(units.reduce((total, unit) => total + unit.cheapCalls, 0)),
      strong_alone: round(units.reduce((total, unit) => total + (unit.strongCalls ?? 0), 0)),
      cascade: round(units.reduce((total, unit) => total + unit.cheapCalls, 0) + escalated.reduce((total, unit) => total + (unit.strongCalls ?? 0), 0)),
    },
    cost_usd: {
      cheap_alone: sum(units.map((unit) => unit.cheapCost)),
      strong_alone: sum(units.map((unit) => unit.strongCost)),
      cascade: sum([...units.map((unit) => unit.cheapCost), ...escalated.map((unit) => unit.strongCost)]),
    },
  };
}

/**
 * `--dry-run` estimates, before the strong judge has run: per band, how many of the cheap run's
 * criteria would escalate, and what the cascade and the strong judge alone would cost, each
 * criterion's strong call estimated as the cheap call's tokens at the strong model's price.
 */
export function estimateBands(units: readonly CalibrationUnit[], bands: readonly Band[], strongPrice: ModelPrice | undefined) {
  const strongCost = (unit: CalibrationUnit) => (strongPrice === undefined ? null : (unit.cheapTokens.input * strongPrice.input + unit.cheapTokens.output * strongPrice.output) / 1_000_000);
  const cheapCalls = units.reduce((total, unit) => total + unit.cheapCalls, 0);
  return bands.map((band) => {
    const escalated = units.filter((unit) => inside(band, unit.probability));
    return {
      band,
      escalated: escalated.length,
      escalation_rate: units.length === 0 ? null : escalated.length / units.length,
      calls: { strong_alone: round(cheapCalls), cascade: round(cheapCalls + escalated.reduce((total, unit) => total + unit.cheapCalls, 0)) },
      cost_usd: { strong_alone: sum(units.map(strongCost)), cascade: sum([...units.map((unit) => unit.cheapCost), ...escalated.map(strongCost)]) },
    };
  });
}
