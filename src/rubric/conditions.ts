/**
 * Conditional criteria (`when: {criterion, verdict}`): a criterion graded only when another
 * criterion of the same rubric got a given verdict. The conditions form a graph checked here, at
 * the edge, so grading never meets a criterion it cannot order or could never reach:
 * - every condition names another criterion of the rubric (no missing parent, no self-reference);
 * - no cycle (the criteria can be graded parents first, in waves by depth);
 * - no unreachable criterion: one whose conditions can never all hold, because they ask two
 *   verdicts of one parent that cannot both be true (`true` and `false`, disjoint labels), directly
 *   or through the conditions its parents need themselves, or a label not on the parent's scale,
 *   or (under the hard-rule gate) a failed hard rule, which gates the item before it is reached.
 * The same condition given twice is counted once.
 */
import { RubricateError } from '../errors.js';
import type { Criterion, CriterionCondition, Rubric } from './schema.js';

/** How a condition was given, for the field an error names (`when.criterion` or `when[1].criterion`). */
export interface ConditionLocation {
  file?: string;
  line?: number;
  /** Field path of criterion `index`'s `when` (e.g. `rubric.criteria[2].when`). */
  whenField(index: number): string;
  /** Whether criterion `index` gave a list of conditions (its fields then carry the condition's index). */
  listed(index: number): boolean;
}

/** The conditions as given (one or a list; a label or labels) in their normalised form, repeats dropped. */
export function normalizeConditions(when: { criterion: string | number; verdict: boolean | string | string[] } | Array<{ criterion: string | number; verdict: boolean | string | string[] }>): CriterionCondition[] {
  const conditions: CriterionCondition[] = [];
  const seen = new Set<string>();
  for (const given of Array.isArray(when) ? when : [when]) {
    const verdict = typeof given.verdict === 'boolean' ? given.verdict : [...new Set(typeof given.verdict === 'string' ? [given.verdict] : given.verdict)];
    const condition: CriterionCondition = { criterion: String(given.criterion), verdict };
    const key = JSON.stringify(condition);
    if (seen.has(key)) continue;
    seen.add(key);
    conditions.push(condition);
  }
  return conditions;
}

/** Whether any criterion of the rubric is conditional. */
export function hasConditions(rubric: Pick<Rubric, 'criteria'>): boolean {
  return rubric.criteria.some((criterion) => criterion.when !== undefined);
}

/** A scale choice's value: its own, else index ÷ (choices − 1). */
function choiceValues(criterion: Criterion): Array<{ label: string; met: boolean }> | undefined {
  const scale = criterion.scale;
  if (scale?.type !== 'ordinal') return undefined;
  const threshold = scale.metThreshold ?? 1;
  return scale.choices.map((choice, index) => ({ label: choice.label, met: (choice.value ?? index / (scale.choices.length - 1)) >= threshold }));
}

/** The parent's outcomes a condition accepts: `met`/`unmet` for a binary parent, labels for an ordinal one. */
function acceptedOutcomes(parent: Criterion, condition: CriterionCondition): Set<string> {
  const choices = choiceValues(parent);
  if (!choices) return new Set([condition.verdict === true ? 'met' : 'unmet']);
  if (typeof condition.verdict === 'boolean') return new Set(choices.filter((choice) => choice.met === condition.verdict).map((choice) => choice.label));
  return new Set(condition.verdict);
}

/** Whether a condition holds for some verdict that meets the parent (a passed hard rule). */
function acceptsMet(parent: Criterion, condition: CriterionCondition): boolean {
  const accepted = acceptedOutcomes(parent, condition);
  const choices = choiceValues(parent);
  return choices ? choices.some((choice) => choice.met && accepted.has(choice.label)) : accepted.has('met');
}

function describeOutcomes(parent: Criterion, outcomes: ReadonlySet<string>): string {
  if (!choiceValues(parent)) return outcomes.has('met') ? 'true' : 'false';
  return [...outcomes].map((label) => JSON.stringify(label)).join(', ') || 'no label';
}

/**
 * Checks the conditions of a rubric's criteria (see the file comment) and returns each
 * criterion's depth: 0 for an unconditional one, else one more than its deepest parent.
 */
export function validateConditions(rubric: Pick<Rubric, 'criteria' | 'gate'>, location: ConditionLocation): Map<string, number> {
  const byId = new Map(rubric.criteria.map((criterion, index) => [criterion.id, { criterion, index }]));
  const fail = (index: number, conditionIndex: number | undefined, key: string, message: string): never => {
    const base = location.whenField(index);
    const field = `${base}${location.listed(index) && conditionIndex !== undefined ? `[${conditionIndex}]` : ''}${key ? `.${key}` : ''}`;
    throw new RubricateError('INPUT_INVALID', message, { file: location.file, line: location.line, field });
  };
  const perTurn = rubric.criteria.find((criterion) => criterion.turn !== undefined);
  if (perTurn) {
    const first = rubric.criteria.findIndex((criterion) => criterion.when !== undefined);
    fail(first, undefined, '', `conditional criteria are read on the graded response only, and criterion "${perTurn.id}" is graded per turn (turn ${JSON.stringify(perTurn.turn)}): a rubric with conditions cannot have per-turn criteria`);
  }
  rubric.criteria.forEach((criterion, index) => checkEdges(criterion, index, byId, rubric.gate, fail));
  const depths = orderByDepth(rubric.criteria, byId, fail);
  checkReachable(rubric.criteria, byId, depths, fail);
  return depths;
}

type Fail = (index: number, conditionIndex: number | undefined, key: string, message: string) => never;
type CriteriaById = ReadonlyMap<string, { criterion: Criterion; index: number }>;

function checkEdges(criterion: Criterion, index: number, byId: CriteriaById, gate: Rubric['gate'], fail: Fail): void {
  (criterion.when ?? []).forEach((condition, position) => {
    if (condition.criterion === criterion.id) fail(index, position, 'criterion', `criterion "${criterion.id}" is conditioned on itself: a condition names another criterion of the rubric`);
    const parent = byId.get(condition.criterion)?.criterion;
    if (!parent) fail(index, position, 'criterion', `criterion "${criterion.id}" is conditioned on "${condition.criterion}", which is not a criterion of this rubric`);
    const choices = choiceValues(parent!);
    if (Array.isArray(condition.verdict)) {
      if (!choices) fail(index, position, 'verdict', `criterion "${condition.criterion}" is binary: a condition on it takes verdict true or false, not labels`);
      const unknown = condition.verdict.find((label) => !choices!.some((choice) => choice.label === label));
      if (unknown !== undefined) fail(index, position, 'verdict', `label ${JSON.stringify(unknown)} is not on the scale of criterion "${condition.criterion}" (${choices!.map((choice) => JSON.stringify(choice.label)).join(', ')}): the condition could never hold`);
    }
    if (acceptedOutcomes(parent!, condition).size === 0) fail(index, position, 'verdict', `no label of criterion "${condition.criterion}" is ${condition.verdict === true ? 'met' : 'unmet'} under its met threshold: the condition could never hold`);
    if (gate === 'hard_rules') {
      if (criterion.kind === 'hard_rule' && parent!.kind !== 'hard_rule') fail(index, position, 'criterion', `hard rule "${criterion.id}" is conditioned on principle "${condition.criterion}", but under the hard-rule gate hard rules are graded before principles`);
      if (parent!.kind === 'hard_rule' && criterion.kind !== 'hard_rule' && !acceptsMet(parent!, condition)) {
        fail(index, position, 'verdict', `criterion "${criterion.id}" applies only when hard rule "${condition.criterion}" fails, but under the hard-rule gate a failed hard rule gates the item first: it could never be graded`);
      }
    }
  });
}

/**
 * Depths, refusing a cycle (named by its path). Walked with an explicit stack: a chain of
 * conditions as long as the rubric cannot overflow the call stack.
 */
function orderByDepth(criteria: readonly Criterion[], byId: CriteriaById, fail: Fail): Map<string, number> {
  const depths = new Map<string, number>();
  const onPath = new Set<string>();
  for (const root of criteria) {
    if (depths.has(root.id)) continue;
    const stack: Array<{ criterion: Criterion; next: number }> = [{ criterion: root, next: 0 }];
    onPath.add(root.id);
    while (stack.length > 0) {
      const top = stack[stack.length - 1];
      const conditions = top.criterion.when ?? [];
      if (top.next < conditions.length) {
        const parent = byId.get(conditions[top.next].criterion)!.criterion;
        top.next += 1;
        if (depths.has(parent.id)) continue;
        if (onPath.has(parent.id)) {
          const path = stack.map((entry) => entry.criterion.id);
          const cycle = [...path.slice(path.indexOf(parent.id)), parent.id].map((id) => `"${id}"`).join(' → ');
          fail(byId.get(parent.id)!.index, undefined, '', `the conditions form a cycle (${cycle}, each conditioned on the next): no criterion of it could be graded first`);
        }
        onPath.add(parent.id);
        stack.push({ criterion: parent, next: 0 });
        continue;
      }
      let depth = 0;
      for (const condition of conditions) depth = Math.max(depth, depths.get(condition.criterion)! + 1);
      depths.set(top.criterion.id, depth);
      onPath.delete(top.criterion.id);
      stack.pop();
    }
  }
  return depths;
}

/**
 * What each criterion needs of the verdicts above it (its own conditions and its parents' needs,
 * intersected per ancestor): an empty need means it could never be graded.
 */
function checkReachable(criteria: readonly Criterion[], byId: CriteriaById, depths: ReadonlyMap<string, number>, fail: Fail): void {
  const needs = new Map<string, Map<string, Set<string>>>();
  const ordered = [...criteria].sort((a, b) => depths.get(a.id)! - depths.get(b.id)!);
  for (const criterion of ordered) {
    const need = new Map<string, Set<string>>();
    const index = byId.get(criterion.id)!.index;
    const add = (ancestor: string, outcomes: ReadonlySet<string>, position: number, inherited: boolean) => {
      const before = need.get(ancestor);
      const after = before ? new Set([...before].filter((outcome) => outcomes.has(outcome))) : new Set(outcomes);
      if (after.size === 0) {
        const parent = byId.get(ancestor)!.criterion;
        fail(index, position, '', inherited
          ? `criterion "${criterion.id}" needs verdicts of criterion "${ancestor}" that contradict what its other conditions need (${describeOutcomes(parent, before!)} and ${describeOutcomes(parent, outcomes)}): it could never be graded`
          : `criterion "${criterion.id}" is conditioned on contradictory verdicts of criterion "${ancestor}" (${describeOutcomes(parent, before!)} and ${describeOutcomes(parent, outcomes)}): it could never be graded`);
      }
      need.set(ancestor, after);
    };
    (criterion.when ?? []).forEach((condition, position) => add(condition.criterion, acceptedOutcomes(byId.get(condition.criterion)!.criterion, condition), position, false));
    (criterion.when ?? []).forEach((condition, position) => {
      for (const [ancestor, outcomes] of needs.get(condition.criterion) ?? []) add(ancestor, outcomes, position, true);
    });
    needs.set(criterion.id, need);
  }
}
