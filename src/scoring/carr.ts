/**
 * CaRR's arithmetic, as THUDM released it (reward server and its slime fork), with no judge in
 * it: rubrics filled with the identified entities, breadth-first connectivity from the answer
 * entity E0 over supported rubrics, the rubric reward, the outcome mix, and C-GRPO's group rules.
 */

/** One rubric's record, with the released server's field names (what its answer's `rubric_scores` holds). */
export interface CarrRubricScore {
  raw_rubric: string;
  filled_rubric: string;
  /** The rubric's entities in order of appearance, each with its identity (null: not identified). */
  entity_values: Record<string, string | null>;
  all_entity_identified: boolean;
  is_supported: boolean;
  connected_to_answer: boolean;
  score: 0 | 1;
}

const entityPattern = /<(E\d+)>/g;

/** A rubric with each `<Ek>` replaced by its identity; not all filled when one of its entities has none. */
export function fillRubric(rubric: string, identities: ReadonlyMap<string, string | null>): CarrRubricScore {
  const entityValues: Record<string, string | null> = Object.create(null) as Record<string, string | null>;
  let filled = rubric;
  let allFilled = true;
  for (const match of rubric.matchAll(entityPattern)) {
    const id = match[1];
    const identity = identities.get(id) ?? null;
    entityValues[id] = identity;
    if (identity === null) allFilled = false;
    else filled = filled.replaceAll(`<${id}>`, identity);
  }
  return { raw_rubric: rubric, filled_rubric: filled, entity_values: { ...entityValues }, all_entity_identified: allFilled, is_supported: false, connected_to_answer: false, score: 0 };
}

/**
 * Marks the supported rubrics reachable from E0: entities link the supported rubrics that name
 * them, a rubric reached brings in all its entities. Returns the rubric reward, the share of all
 * rubrics (identified or not) connected to the answer. `connectivity: false` is the fork's
 * `--use-rubric-reward-nobfs` (the share supported, connected or not).
 */
export function connectRubrics(scores: CarrRubricScore[], connectivity = true): number {
  if (scores.length === 0) return 0;
  if (!connectivity) return scores.filter((score) => score.is_supported).length / scores.length;
  const rubricsOf = new Map<string, number[]>();
  scores.forEach((score, index) => {
    if (!score.is_supported) return;
    for (const entity of Object.keys(score.entity_values)) rubricsOf.set(entity, [...(rubricsOf.get(entity) ?? []), index]);
  });
  const reachedEntities = new Set(['E0']);
  const queue = ['E0'];
  let connected = 0;
  while (queue.length > 0) {
    const entity = queue.shift()!;
    for (const index of rubricsOf.get(entity) ?? []) {
      const score = scores[index];
      if (!score.connected_to_answer) {
        score.connected_to_answer = true;
        score.score = 1;
        connected += 1;
      }
      for (const other of Object.keys(score.entity_values)) {
        if (reachedEntities.has(other)) continue;
        reachedEntities.add(other);
        queue.push(other);
      }
    }
  }
  return connected / scores.length;
}

/** The released server's per-response reward: (1 − r)·outcome + r·rubric. */
export function mixCarrReward(outcome: number, rubric: number, ratio: number): number {
  return (1 - ratio) * outcome + ratio * rubric;
}

export interface CarrGroupOptions {
  /** r, the rubric's share (C-GRPO's released runs: 0.3). */
  ratio: number;
  /** `group-max`: each rubric reward divided by the group's largest (when that is above 0). */
  normalize: 'none' | 'group-max';
  /** `correct`: the rubric term only where the outcome is correct; `incorrect`: only where it is not. */
  only: 'all' | 'correct' | 'incorrect';
  /**
   * `release`: the slime fork's code, whose `correct` branch mixes the raw rubric reward even
   * with `group-max` (so normalising has no effect there); `paper`: the normalised one in every branch.
   */
  follow: 'release' | 'paper';
}

export interface CarrGroupMember {
  outcome: number;
  rubric: number;
}

/** C-GRPO's group rewards from each response's outcome and rubric rewards. */
export function carrGroupRewards(members: readonly CarrGroupMember[], options: CarrGroupOptions): number[] {
  const { ratio } = options;
  const max = Math.max(0, ...members.map((member) => member.rubric));
  return members.map(({ outcome, rubric }) => {
    const normalised = options.normalize === 'group-max' && max > 0 ? rubric / max : rubric;
    if (options.only === 'incorrect') return outcome > 0 ? outcome : ratio * normalised;
    if (options.only === 'correct') {
      const rubricTerm = options.follow === 'release' ? rubric : normalised;
      return outcome === 0 ? outcome : mixCarrReward(outcome, rubricTerm, ratio);
    }
    return mixCarrReward(outcome, normalised, ratio);
  });
}

