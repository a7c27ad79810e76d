/**
 * Decompose and filter (after Recursive Rubric Decomposition): criteria that almost every
 * response meets, or almost none, are split into finer ones by the generator; criteria that
 * prefer the rejected response of a preference pair are dropped; near-duplicates (by wording
 * or by verdicts) are dropped; and what remains is weighted so a cluster of correlated
 * criteria counts once. Every change is reported with its reason.
 *
 * Weighting used here: cluster weighting. Criteria whose "good outcome" indicators
 * (met for positive points, not met for Pitfalls) correlate with phi ≥ clusterThreshold
 * across the graded responses are linked; each connected cluster's criteria have their
 * points divided by the cluster's size. (RRD's own scheme whitens by the criteria's
 * covariance; cluster division is the simple, explainable special case for blocks of
 * near-equal correlation, and it never flips a criterion's sign.)
 */
import { RubricateError, toRubricateError } from '../errors.js';
import type { Criterion, CriterionInput, Message, Rubric } from '../rubric/schema.js';
import { comparableText, criterionToInput, rubricFromInputs, shorten } from './criteria.js';
import type { RubricGenerator } from './generator.js';
import { phiCoefficient } from '../statistics/agreement.js';
import { round } from '../statistics/descriptive.js';
import { connectedComponents, textJaccard } from './measures.js';

export interface FilterOptions {
  /** Pass rate at or above which a criterion is split (default 0.9). */
  passRateHigh?: number;
  /** Pass rate at or below which a criterion is split (default 0.1). */
  passRateLow?: number;
  /** Fewer graded responses than this: no pass-rate decisions (default 4). */
  minResponsesForDecomposition?: number;
  /** Splits asked of the generator per round, most important criteria first (default 3). */
  maxDecompositions?: number;
  /** Word uni+bigram Jaccard at or above which two criteria are near-duplicates (default 0.8). */
  textSimilarityThreshold?: number;
  /** Phi at or above which two criteria's verdicts make one redundant (default 0.9). */
  correlationThreshold?: number;
  /** Phi at or above which criteria share a weight cluster (default 0.6). */
  clusterThreshold?: number;
  /** Fewer responses graded on both criteria than this: no correlation decisions (default 4). */
  minResponsesForCorrelation?: number;
}

export const defaultFilterOptions: Required<FilterOptions> = {
  passRateHigh: 0.9,
  passRateLow: 0.1,
  minResponsesForDecomposition: 4,
  maxDecompositions: 3,
  textSimilarityThreshold: 0.8,
  correlationThreshold: 0.9,
  clusterThreshold: 0.6,
  minResponsesForCorrelation: 4,
};

export type FilterAction =
  | { action: 'decomposed'; criterion_id: string; text: string; pass_rate: number; into: string[] }
  | { action: 'decompose_failed'; criterion_id: string; text: string; pass_rate: number; error: string }
  | { action: 'dropped'; reason: 'misaligned'; criterion_id: string; text: string; edge: number; pairs: number }
  | { action: 'dropped'; reason: 'duplicate_text'; criterion_id: string; text: string; kept_id: string; similarity: number }
  | { action: 'dropped'; reason: 'correlated_verdicts'; criterion_id: string; text: string; kept_id: string; phi: number }
  | { action: 'reweighted'; criterion_id: string; text: string; cluster: string[]; points_before: number; points_after: number };

/** Verdicts per criterion id, one entry per graded response (null: error or skipped). */
export type VerdictMatrix = ReadonlyMap<string, ReadonlyArray<boolean | null>>;

/** Verdicts of one preference pair's two responses under the rubric. */
export interface PairVerdicts {
  chosen: ReadonlyMap<string, boolean | null>;
  rejected: ReadonlyMap<string, boolean | null>;
}

export interface PassRate {
  rate: number;
  n: number;
}

export function passRates(rubric: Rubric, verdicts: VerdictMatrix): Map<string, PassRate> {
  const rates = new Map<string, PassRate>();
  for (const criterion of rubric.criteria) {
    const known = (verdicts.get(criterion.id) ?? []).filter((verdict): verdict is boolean => verdict !== null);
    if (known.length === 0) continue;
    rates.set(criterion.id, { rate: known.filter(Boolean).length / known.length, n: known.length });
  }
  return rates;
}

/** 1 where the response did well on the criterion: met for positive points, not met for Pitfalls. */
function goodness(criterion: Criterion, verdicts: ReadonlyArray<boolean | null>): Array<boolean | null> {
  return verdicts.map((verdict) => (verdict === null ? null : criterion.points >= 0 ? verdict : !verdict));
}

function knownTogether(first: ReadonlyArray<boolean | null>, second: ReadonlyArray<boolean | null>): number {
  let count = 0;
  for (let index = 0; index < Math.min(first.length, second.length); index += 1) if (first[index] !== null && second[index] !== null) count += 1;
  return count;
}

/**
 * Edge of each criterion on the preference pairs: mean over pairs of (good on chosen − good
 * on rejected), in [−1, 1]. Negative means the criterion prefers the rejected responses.
 */
export function preferenceEdges(rubric: Rubric, pairs: readonly PairVerdicts[]): Map<string, { edge: number; pairs: number }> {
  const edges = new Map<string, { edge: number; pairs: number }>();
  for (const criterion of rubric.criteria) {
    let total = 0;
    let counted = 0;
    for (const pair of pairs) {
      const chosen = pair.chosen.get(criterion.id);
      const rejected = pair.rejected.get(criterion.id);
      if (chosen === null || chosen === undefined || rejected === null || rejected === undefined) continue;
      const sign = criterion.points >= 0 ? 1 : -1;
      total += sign * (Number(chosen) - Number(rejected));
      counted += 1;
    }
    if (counted > 0) edges.set(criterion.id, { edge: total / counted, pairs: counted });
  }
  return edges;
}

/** Which criterion of a redundant pair survives: larger |points| first, then the earlier one. */
function priorityOrder(rubric: Rubric): Criterion[] {
  return rubric.criteria
    .map((criterion, index) => ({ criterion, index }))
    .sort((first, second) => Math.abs(second.criterion.points) - Math.abs(first.criterion.points) || first.index - second.index)
    .map((entry) => entry.criterion);
}

export interface FilterResult {
  rubric: Rubric;
  actions: FilterAction[];
}

/** Drops misaligned criteria (negative edge on the pairs) and redundant ones (wording or verdicts). */
export function dropMisalignedAndRedundant(rubric: Rubric, verdicts: VerdictMatrix, pairs: readonly PairVerdicts[], options: FilterOptions = {}): FilterResult {
  const settings = { ...defaultFilterOptions, ...options };
  const actions: FilterAction[] = [];
  const dropped = new Set<string>();

  if (pairs.length > 0) {
    for (const [id, { edge, pairs: counted }] of preferenceEdges(rubric, pairs)) {
      if (edge >= 0) continue;
      const criterion = rubric.criteria.find((entry) => entry.id === id)!;
      dropped.add(id);
      actions.push({ action: 'dropped', reason: 'misaligned', criterion_id: id, text: criterion.text, edge: round(edge), pairs: counted });
    }
  }

  const kept: Criterion[] = [];
  for (const criterion of priorityOrder(rubric)) {
    if (dropped.has(criterion.id)) continue;
    let reason: FilterAction | undefined;
    const mine = goodness(criterion, verdicts.get(criterion.id) ?? []);
    for (const other of kept) {
      const similarity = textJaccard(criterion.text, other.text);
      if (comparableText(criterion.text) === comparableText(other.text) || similarity >= settings.textSimilarityThreshold) {
        reason = { action: 'dropped', reason: 'duplicate_text', criterion_id: criterion.id, text: criterion.text, kept_id: other.id, similarity: round(similarity) };
        break;
      }
      const theirs = goodness(other, verdicts.get(other.id) ?? []);
      if (knownTogether(mine, theirs) < settings.minResponsesForCorrelation) continue;
      const phi = phiCoefficient(mine, theirs);
      if (phi !== null && phi >= settings.correlationThreshold) {
        reason = { action: 'dropped', reason: 'correlated_verdicts', criterion_id: criterion.id, text: criterion.text, kept_id: other.id, phi: round(phi) };
        break;
      }
    }
    if (reason) {
      dropped.add(criterion.id);
      actions.push(reason);
    } else {
      kept.push(criterion);
    }
  }
  if (dropped.size === 0) return { rubric, actions };
  const remaining = rubric.criteria.filter((criterion) => !dropped.has(criterion.id));
  if (remaining.length === 0) {
    // Never hand back an empty rubric: keep the original and say why.
    throw new RubricateError('INTERNAL', 'the filter would drop every criterion of the rubric');
  }
  return { rubric: withCriteria(rubric, remaining.map(criterionToInput)), actions };
}

/**
 * Cluster weighting: criteria whose good-outcome indicators correlate with phi ≥ clusterThreshold
 * are linked; each connected cluster's points are divided by its size.
 */
export function clusterWeights(rubric: Rubric, verdicts: VerdictMatrix, options: FilterOptions = {}): FilterResult {
  const settings = { ...defaultFilterOptions, ...options };
  const criteria = rubric.criteria;
  const indicators = criteria.map((criterion) => goodness(criterion, verdicts.get(criterion.id) ?? []));
  const edges: Array<[number, number]> = [];
  for (let first = 0; first < criteria.length; first += 1) {
    for (let second = first + 1; second < criteria.length; second += 1) {
      if (knownTogether(indicators[first], indicators[second]) < settings.minResponsesForCorrelation) continue;
      const phi = phiCoefficient(indicators[first], indicators[second]);
      if (phi !== null && phi >= settings.clusterThreshold) edges.push([first, second]);
    }
  }
  const actions: FilterAction[] = [];
  const inputs = criteria.map(criterionToInput);
  for (const component of connectedComponents(criteria.length, edges)) {
    if (component.length < 2) continue;
    const cluster = component.map((index) => criteria[index].id);
    for (const index of component) {
      const before = criteria[index].points;
      const after = round(before / component.length);
      inputs[index].points = after;
      inputs[index].metadata = { ...inputs[index].metadata, points_before_weighting: before, weight_cluster: cluster };
      actions.push({ action: 'reweighted', criterion_id: criteria[index].id, text: criteria[index].text, cluster, points_before: before, points_after: after });
    }
  }
  if (actions.length === 0) return { rubric, actions };
  return { rubric: withCriteria(rubric, inputs), actions };
}

export interface DecomposeOptions extends FilterOptions {
  generator: RubricGenerator;
  prompt: readonly Message[];
  /** The graded responses, in the verdict matrix's order (examples for the generator). */
  responses: readonly string[];
  /** Sample number for the generator's store key (rounds of the same rubric differ). */
  sample?: number;
}

/** Splits criteria with extreme pass rates into finer ones (generator calls); failures are reported, not fatal. */
export async function decomposeExtremeCriteria(rubric: Rubric, verdicts: VerdictMatrix, options: DecomposeOptions): Promise<FilterResult> {
  const settings = { ...defaultFilterOptions, ...options };
  const rates = passRates(rubric, verdicts);
  const candidates = priorityOrder(rubric)
    .filter((criterion) => {
      const rate = rates.get(criterion.id);
      return rate !== undefined && rate.n >= settings.minResponsesForDecomposition && (rate.rate >= settings.passRateHigh || rate.rate <= settings.passRateLow);
    })
    .slice(0, settings.maxDecompositions);
  if (candidates.length === 0) return { rubric, actions: [] };

  const actions: FilterAction[] = [];
  const replacements = new Map<string, CriterionInput[]>();
  const existing = new Set(rubric.criteria.map((criterion) => comparableText(criterion.text)));
  await Promise.all(
    candidates.map(async (criterion) => {
      const passRate = rates.get(criterion.id)!.rate;
      try {
        const parts = await options.generator.decompose(
          { prompt: options.prompt, criterion, passRate, examples: exampleResponses(verdicts.get(criterion.id) ?? [], options.responses) },
          { sample: options.sample },
        );
        const fresh = parts.criteria.filter((part) => !existing.has(comparableText(part.text)));
        if (fresh.length === 0) throw new RubricateError('JUDGE_UNPARSEABLE', 'the finer criteria only repeated existing ones');
        for (const part of fresh) part.metadata = { ...part.metadata, decomposed_from: criterion.id };
        replacements.set(criterion.id, fresh);
      } catch (error) {
        if (isFatal(error)) throw error;
        actions.push({ action: 'decompose_failed', criterion_id: criterion.id, text: criterion.text, pass_rate: round(passRate), error: toRubricateError(error).message });
      }
    }),
  );
  if (replacements.size === 0) return { rubric, actions };
  const inputs: CriterionInput[] = [];
  for (const criterion of rubric.criteria) {
    const parts = replacements.get(criterion.id);
    if (parts) inputs.push(...parts);
    else inputs.push(criterionToInput(criterion));
  }
  const next = withCriteria(rubric, inputs);
  // Report in rubric order, with the ids the finer criteria got.
  const idsByText = new Map(next.criteria.map((criterion) => [criterion.text, criterion.id]));
  for (const criterion of rubric.criteria) {
    const parts = replacements.get(criterion.id);
    if (!parts) continue;
    actions.push({
      action: 'decomposed',
      criterion_id: criterion.id,
      text: criterion.text,
      pass_rate: round(rates.get(criterion.id)!.rate),
      into: parts.map((part) => idsByText.get(part.text) ?? part.text),
    });
  }
  return { rubric: next, actions };
}

/** Errors that end the whole run rather than one decomposition. */
export function isFatal(error: unknown): boolean {
  return RubricateError.isInstance(error) && (error.code === 'DEADLINE_EXCEEDED' || error.code === 'JUDGE_AUTH' || error.code === 'JUDGE_UNAVAILABLE');
}

/** Up to two examples: one response that meets the criterion and one that does not, when both exist. */
function exampleResponses(verdicts: ReadonlyArray<boolean | null>, responses: readonly string[]): string[] {
  const met = verdicts.findIndex((verdict) => verdict === true);
  const notMet = verdicts.findIndex((verdict) => verdict === false);
  const picks = [met, notMet].filter((index) => index >= 0 && index < responses.length);
  for (let index = 0; picks.length < 2 && index < responses.length; index += 1) if (!picks.includes(index)) picks.push(index);
  return picks.map((index) => shortenResponse(responses[index]));
}

function shortenResponse(text: string, limit = 4000): string {
  return text.length > limit ? `${text.slice(0, limit)}\n[… ${text.length - limit} more characters]` : text;
}

/** The rubric with new criteria, keeping its id, gate and metadata. */
export function withCriteria(rubric: Rubric, criteria: CriterionInput[]): Rubric {
  return rubricFromInputs(criteria, { id: rubric.id, gate: rubric.gate === 'hard_rules', metadata: rubric.metadata });
}

/** Human-readable one-liner per action, for summaries. */
export function describeAction(action: FilterAction): string {
  const text = `"${shorten(action.text, 60)}"`;
  switch (action.action) {
    case 'decomposed':
      return `split ${text} (pass rate ${action.pass_rate}) into ${action.into.length}`;
    case 'decompose_failed':
      return `could not split ${text}: ${action.error}`;
    case 'reweighted':
      return `reweighted ${text}: ${action.points_before} → ${action.points_after} (cluster of ${action.cluster.length})`;
    case 'dropped':
      if (action.reason === 'misaligned') return `dropped ${text}: prefers rejected responses (edge ${action.edge} over ${action.pairs} pairs)`;
      if (action.reason === 'duplicate_text') return `dropped ${text}: near-duplicate of ${action.kept_id} (similarity ${action.similarity})`;
      return `dropped ${text}: verdicts track ${action.kept_id} (phi ${action.phi})`;
  }
}
