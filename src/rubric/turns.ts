/**
 * Conversations graded turn by turn. An item's assistant turns are the assistant messages of its
 * prompt, in order, then its response (the last turn). A criterion says which turn it is about
 * (`turn`: `last`, the default; `every`; or N); the item at turn N is the conversation up to that
 * turn as context and the turn itself as the response, so every grading mode, cache key and
 * reply parser works on it unchanged.
 */
import { RubricateError } from '../errors.js';
import type { Criterion, Item, Rubric } from './schema.js';

const perTurnMemo = new WeakMap<Rubric, boolean>();

/** Whether any criterion of the rubric is about a turn other than the last. */
export function hasPerTurnCriteria(rubric: Rubric): boolean {
  let found = perTurnMemo.get(rubric);
  if (found === undefined) {
    found = rubric.criteria.some((criterion) => criterion.turn !== undefined && criterion.turn !== 'last');
    perTurnMemo.set(rubric, found);
  }
  return found;
}

/** Assistant turns of an item: those of its prompt, and its response. */
export function assistantTurnCount(item: Pick<Item, 'prompt'>): number {
  return item.prompt.filter((message) => message.role === 'assistant').length + 1;
}

/** The turns (1-based) a criterion is graded on in a conversation of `total` assistant turns. */
export function turnsOf(criterion: Criterion, total: number): number[] {
  const turn = criterion.turn ?? 'last';
  if (turn === 'last') return [total];
  if (turn === 'every') return Array.from({ length: total }, (_, index) => index + 1);
  return [turn];
}

/**
 * The item a turn is graded as: the conversation before it, that turn as the response, and the
 * given criteria. The last turn is the item itself (same prompt, response and reference, so the
 * same prompts and cache keys as a whole-conversation grading); an earlier turn has no reference
 * (a reference answers the final request).
 */
export function itemAtTurn(item: Item, turn: number, criteria: Criterion[]): Item {
  const rubric: Rubric = { ...item.rubric, criteria };
  if (turn === assistantTurnCount(item)) return { ...item, rubric };
  let seen = 0;
  const index = item.prompt.findIndex((message) => message.role === 'assistant' && (seen += 1) === turn);
  if (index < 0) throw new RubricateError('INTERNAL', `item ${item.id} has no assistant turn ${turn}`);
  const { reference: _reference, ...rest } = item;
  return { ...rest, prompt: item.prompt.slice(0, index), response: item.prompt[index].content, rubric };
}

/**
 * Why an item cannot be graded turn by turn, if it cannot: a criterion about a turn the
 * conversation does not have, or a response that is not one assistant turn (a trajectory) or
 * carries images (their placeholders would not follow the turns).
 */
export function turnProblem(item: Item): { message: string; field: string } | undefined {
  if (!hasPerTurnCriteria(item.rubric)) return undefined;
  if (item.trajectory) return { message: 'per-turn criteria grade the assistant turns of a conversation; this response is an agent trajectory (grade it with turn "last")', field: 'response' };
  if (item.images && item.images.length > 0) return { message: 'per-turn criteria cannot be graded on items with images', field: 'rubric' };
  const total = assistantTurnCount(item);
  const index = item.rubric.criteria.findIndex((criterion) => typeof criterion.turn === 'number' && criterion.turn > total);
  if (index >= 0) return { message: `turn ${String(item.rubric.criteria[index].turn)} does not exist: the conversation has ${total} assistant turn${total === 1 ? '' : 's'} (the response is the last)`, field: `rubric.criteria[${index}].turn` };
  return undefined;
}
