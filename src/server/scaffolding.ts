/**
 * RuscaRL's rubric scaffolding (Zhou et al., arXiv:2508.16949): while rollouts are generated,
 * the prompt carries part of its own rubric as explicit guidance, less of it for later members
 * of a group and less as training goes on, so the policy explores with help early and learns
 * to do without it. Each rollout i of a group of G at step t of T is shown
 *
 *   round(K · ratio) of the K criteria,   ratio = group(i) · decay(t)
 *   group(i) = (G − 1 − i) ÷ (G − 1)                     (intra-group: the first sees all, the last none; G = 1: 1)
 *   decay(t) = 1 ÷ (1 + exp(steepness · (x − start))),   x = clamp((t − 1) ÷ (T − 1), 0, 1)   (T ≤ 1: 1)
 *
 * with the paper's recommended `start` 0.2 and `steepness` 125 (its code's `step_sigmoid` rule
 * with linear intra-group decay). Rounding is half to even, as the reference's Python `round`.
 * The criteria shown are a sample seeded by the prompt, the step and the rollout's index (the
 * reference draws at random), listed in rubric order: criteria to meet with their points, and
 * pitfalls to avoid. The guidance joins the prompt's system message, or becomes one.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Criterion, Message, Rubric } from '../rubric/schema.js';
import { numpyRound } from '../statistics/reference-math.js';
import { seededRandom, shuffled } from '../util/random.js';

export const scaffoldScheduleSchema = z.strictObject({
  /** Training progress (0–1) at which the sigmoid decay is halfway (default 0.2). */
  start: z.number().min(0).max(1).default(0.2),
  /** How fast the guidance goes at `start` (default 125; 10 is gradual). */
  steepness: z.number().positive().default(125),
});

export type ScaffoldSchedule = z.output<typeof scaffoldScheduleSchema>;

/** The inter-step decay of the guidance at step `step` (1-based, as trainers count) of `totalSteps`. */
export function scaffoldDecay(step: number, totalSteps: number, schedule: ScaffoldSchedule): number {
  if (totalSteps <= 1) return 1;
  const progress = Math.min(1, Math.max(0, (step - 1) / (totalSteps - 1)));
  return Math.min(1, Math.max(0, 1 / (1 + Math.exp(schedule.steepness * (progress - schedule.start)))));
}

/** The intra-group share of rollout `index` (from 0) of a group of `size`. */
export function scaffoldGroupShare(index: number, size: number): number {
  if (size <= 1) return 1;
  return Math.max(0, (size - 1 - index) / (size - 1));
}

function formatPoints(points: number): string {
  return Number.isInteger(points) ? String(points) : String(Number(points.toPrecision(12)));
}

/** The guidance text for the criteria shown: what to include, what to avoid. */
export function scaffoldGuidance(criteria: readonly Criterion[]): string {
  const include = criteria.filter((criterion) => criterion.points > 0).map((criterion) => `- ${criterion.text} (${formatPoints(criterion.points)} points)`);
  const avoid = criteria.filter((criterion) => criterion.points < 0).map((criterion) => `- ${criterion.text} (costs ${formatPoints(-criterion.points)} points)`);
  const parts = ['Your answer to this request will be assessed on the criteria below.'];
  if (include.length > 0) parts.push(`Aim to do these:\n${include.join('\n')}`);
  if (avoid.length > 0) parts.push(`Do not do these:\n${avoid.join('\n')}`);
  parts.push('Write a complete answer to the user in your own words. Do not mention these criteria, or that you were given any.');
  return parts.join('\n\n');
}

export interface ScaffoldedRollout {
  /** The rollout prompt: the guidance in the system message (the prompt unchanged when nothing is shown). */
  prompt: Message[];
  ratio: number;
  /** Ids of the criteria shown, in rubric order. */
  shown: string[];
}

export interface ScaffoldRequest {
  prompt: Message[];
  rubric: Rubric;
  step: number;
  totalSteps: number;
  groupSize: number;
  schedule: ScaffoldSchedule;
  seed: number;
}

/** Every rollout prompt of the group (index 0 … groupSize − 1). */
export function scaffoldGroup(request: ScaffoldRequest): { decay: number; rollouts: ScaffoldedRollout[] } {
  const decay = scaffoldDecay(request.step, request.totalSteps, request.schedule);
  const criteria = request.rubric.criteria;
  const rollouts = Array.from({ length: request.groupSize }, (_, index): ScaffoldedRollout => {
    const ratio = scaffoldGroupShare(index, request.groupSize) * decay;
    const count = numpyRound(criteria.length * ratio, 0);
    if (count === 0) return { prompt: request.prompt, ratio, shown: [] };
    const hash = createHash('sha256').update(`rubricate-scaffold\u0000${request.seed}\u0000${request.step}\u0000${index}\u0000`);
    for (const message of request.prompt) hash.update(`${message.role}\u0000${message.content}\u0000`);
    const chosen = new Set(shuffled(criteria, seededRandom(hash.digest().readUInt32LE(0))).slice(0, count));
    const shown = criteria.filter((criterion) => chosen.has(criterion));
    const guidance = scaffoldGuidance(shown);
    const [first, ...rest] = request.prompt;
    const prompt = first?.role === 'system' ? [{ role: 'system', content: `${first.content}\n\n${guidance}` }, ...rest] : [{ role: 'system', content: guidance }, ...request.prompt];
    return { prompt, ratio, shown: shown.map((criterion) => criterion.id) };
  });
  return { decay, rollouts };
}
