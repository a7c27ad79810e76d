/**
 * Process rewards: criteria judged on every step of an agent trajectory (`scope: "step"`).
 *
 * A step is one assistant message of the trajectory (its reasoning, text and tool calls
 * together) with the tool results that answer it, up to the next assistant message: one action
 * of the agent and what it observed. Messages before the first assistant message (system, user)
 * are context, never a step. The item at step k is the trajectory cut after step k, rendered as
 * judges always read trajectories, with each step criterion asked about that last step only:
 * the steps before it are context, the steps after it are not shown.
 */
import { RubricateError } from '../errors.js';
import { renderTrajectory } from '../trajectory/render.js';
import { forEachStep, type Trajectory } from '../trajectory/trajectory.js';
import type { Criterion, Item, Rubric, StepAggregate } from './schema.js';

/** Where one step lies: its messages `[start, end)` and its rendered step numbers (1-based, inclusive). */
export interface TrajectoryStepSpan {
  start: number;
  end: number;
  firstRendered: number;
  lastRendered: number;
}

const stepMemo = new WeakMap<Rubric, boolean>();

/** Whether any criterion of the rubric is step-scoped. */
export function hasStepCriteria(rubric: Rubric): boolean {
  let found = stepMemo.get(rubric);
  if (found === undefined) {
    found = rubric.criteria.some((criterion) => criterion.scope === 'step');
    stepMemo.set(rubric, found);
  }
  return found;
}

/** The rubric's step fold as written (`"min"` or `{rule, gamma}`), normalised to one shape. */
export function normalizeStepAggregate(value: string | { rule: string; gamma?: number }): StepAggregate {
  const rule = typeof value === 'string' ? value : value.rule;
  if (rule === 'discounted') return { rule, gamma: (value as { gamma: number }).gamma };
  return { rule: rule as 'min' | 'mean' | 'last' };
}

/** The steps of a trajectory, in order (see the module's definition). */
export function trajectoryStepSpans(trajectory: Trajectory): TrajectoryStepSpan[] {
  const starts: number[] = [];
  trajectory.forEach((message, index) => {
    if (message.role === 'assistant') starts.push(index);
  });
  const spans = starts.map((start, position) => ({ start, end: starts[position + 1] ?? trajectory.length, firstRendered: 0, lastRendered: 0 }));
  let position = 0;
  forEachStep(trajectory, (step) => {
    while (position < spans.length && step.message >= spans[position].end) position += 1;
    const span = spans[position];
    if (!span || step.message < span.start) return;
    if (span.firstRendered === 0) span.firstRendered = step.number;
    span.lastRendered = step.number;
  });
  return spans;
}

/** A step criterion as asked at one step: its text, then which step it is about (inside the criterion's fenced block). */
function atStep(criterion: Criterion, step: number, total: number, span: TrajectoryStepSpan): Criterion {
  const shown = span.firstRendered === span.lastRendered ? `step ${span.firstRendered}` : `steps ${span.firstRendered}–${span.lastRendered}`;
  return {
    ...criterion,
    text: `${criterion.text}\n(Process step ${step} of ${total}: judge only the trajectory's last assistant step, shown as ${shown}, with the steps before it as context.)`,
  };
}

/**
 * The item step `step` (1-based) is graded as: the trajectory cut after that step, and the step
 * criteria asked about it. It keeps no reference (a reference answers the whole task).
 */
export function itemAtStep(item: Item, step: number, criteria: readonly Criterion[], spans: readonly TrajectoryStepSpan[]): Item {
  const span = spans[step - 1];
  if (!item.trajectory || !span) throw new RubricateError('INTERNAL', `item ${item.id} has no trajectory step ${step}`);
  const trajectory = item.trajectory.slice(0, span.end);
  const { reference: _reference, ...rest } = item;
  const rubric: Rubric = { ...item.rubric, criteria: criteria.map((criterion) => atStep(criterion, step, spans.length, span)) };
  return { ...rest, response: renderTrajectory(trajectory), trajectory, rubric };
}

/** Why the rubric's step criteria cannot be graded as declared, if they cannot (a path below the rubric). */
export function stepScopeProblem(rubric: Rubric): { message: string; path: Array<string | number> } | undefined {
  if (!hasStepCriteria(rubric)) {
    if (rubric.stepAggregate) return { message: 'step_aggregate folds step-scoped criteria, and no criterion has scope "step"', path: ['step_aggregate'] };
    return undefined;
  }
  if (rubric.gate) return { message: 'a hard-rule gate cannot be combined with step-scoped criteria (the gate decides one whole response)', path: ['gate'] };
  const index = rubric.criteria.findIndex((criterion) => criterion.scope === 'step' && (criterion.turn !== undefined || criterion.when !== undefined || criterion.kind === 'hard_rule'));
  if (index >= 0) {
    const criterion = rubric.criteria[index];
    const what = criterion.turn !== undefined ? 'turn' : criterion.when !== undefined ? 'when' : 'kind';
    return { message: `a step-scoped criterion cannot also have ${what === 'kind' ? 'kind "hard_rule"' : `\`${what}\``}: it is graded on each step of a trajectory`, path: ['criteria', index, what] };
  }
  // A condition is read from one verdict of the whole response; a step criterion has one per step.
  const stepIds = new Set(rubric.criteria.filter((criterion) => criterion.scope === 'step').map((criterion) => criterion.id));
  const conditional = rubric.criteria.findIndex((criterion) => criterion.when?.some((condition) => stepIds.has(condition.criterion)));
  if (conditional >= 0) return { message: 'a condition (`when`) cannot name a step-scoped criterion: it has a verdict per step, not one for the response', path: ['criteria', conditional, 'when'] };
  return undefined;
}

/** Why an item cannot be graded step by step, if it cannot: step criteria need a trajectory with a step. */
export function stepProblem(item: Item): { message: string; field: string } | undefined {
  if (!hasStepCriteria(item.rubric)) return undefined;
  if (!item.trajectory) return { message: 'step-scoped criteria (scope "step") grade the steps of an agent trajectory: give the response as messages', field: 'response' };
  if (!item.trajectory.some((message) => message.role === 'assistant')) return { message: 'the trajectory has no assistant message, so no step to grade', field: 'response' };
  return undefined;
}

/** The error of a trajectory with more steps than `--max-steps`: refused before any call. */
export function tooManySteps(steps: number, maxSteps: number): RubricateError {
  return new RubricateError('LIMIT_EXCEEDED', `the trajectory has ${steps} steps, over the bound of ${maxSteps} (--max-steps) for step-scoped criteria: it is not graded; shorten it, or raise --max-steps`, {
    field: 'response',
    limit: 'max-steps',
    maximum: maxSteps,
  });
}
