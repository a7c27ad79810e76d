/**
 * Request bodies → items. The native item is the canonical `items` record (validated by
 * `normalizeItem`); the id may be left out (it is then derived from the content), and the
 * rubric may arrive as a JSON string, as datasets often store it in a text column.
 */
import { createHash } from 'node:crypto';
import { RubricateError } from '../errors.js';
import { zodIssueError } from '../util/zod-issue.js';
import { memoizedRubricHash } from '../rubric/hashing.js';
import { sha256Hex } from '../util/hash.js';
import { formatPath, normalizeItem, normalizeMessages, normalizeRubric } from '../rubric/normalize.js';
import { hasStepCriteria } from '../rubric/steps.js';
import { renderTrajectory } from '../trajectory/render.js';
import { normalizeTrajectory, trajectoryInputSchema, type Trajectory } from '../trajectory/trajectory.js';
import { messageInputSchema, type Item, type Message, type Rubric } from '../rubric/schema.js';
import { parseInputJson } from '../util/json.js';
import { z } from 'zod';
import { isRecord } from '../util/is-record.js';

export interface ItemInputContext {
  /** Rubrics by id, for items that give `rubric_id` (`serve --rubrics FILE`). */
  rubrics?: ReadonlyMap<string, Rubric>;
  /** Normalised rubrics of recent requests (see RubricCache). */
  rubricCache?: RubricCache;
  /** Where the item sits in the request body, e.g. `items[3]`, for error messages. */
  field?: string;
}

/**
 * Recently seen rubrics, normalised once. RL traffic sends the same rubric with every
 * response of a group and again every epoch; validating and hashing it each time would be
 * most of the server's own work. Keyed by the rubric's JSON text as received; the cached
 * Rubric objects are shared and never mutated.
 */
export class RubricCache {
  private readonly entries = new Map<string, Rubric>();

  constructor(readonly capacity = 1024) {}

  get size(): number {
    return this.entries.size;
  }

  normalize(value: unknown, field = 'rubric'): Rubric {
    const key = typeof value === 'string' ? value : JSON.stringify(value);
    if (key === undefined) return normalizeRubric(parseRubricValue(value, field), { fieldPrefix: field });
    const cached = this.entries.get(key);
    if (cached) {
      // Most recently used last, so the oldest is evicted first.
      this.entries.delete(key);
      this.entries.set(key, cached);
      return cached;
    }
    const rubric = normalizeRubric(parseRubricValue(value, field), { fieldPrefix: field });
    if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, rubric);
    return rubric;
  }
}

/** Identity of an item's grading: same rubric, prompt, response and reference ⇒ same verdicts. */
export function itemContentKey(item: Item): string {
  // One string and a one-shot hash: the same bytes (and digest) as hashing the parts in turn.
  let material = `rubricate-item/1\u0000${memoizedRubricHash(item.rubric)}\u0000`;
  for (const message of item.prompt) material += `${message.role}\u0000${message.content}\u0000`;
  material += `\u0001${item.response}\u0001${item.reference === undefined ? '\u0002' : item.reference}`;
  return sha256Hex(material);
}

export function derivedItemId(item: Item): string {
  return `item_${itemContentKey(item).slice(0, 16)}`;
}

/** Re-roots an error's field path under `prefix` (e.g. `rubric.criteria[0]` → `items[2].rubric.criteria[0]`). */
export function prefixField(error: unknown, prefix: string | undefined): unknown {
  if (!prefix || !RubricateError.isInstance(error)) return error;
  const field = error.details.field;
  const joined = field ? (field.startsWith('[') ? `${prefix}${field}` : `${prefix}.${field}`) : prefix;
  return new RubricateError(error.code, error.message, { ...error.details, field: joined }, { cause: error });
}

/** A rubric given as an object, or as a string holding one (JSON). */
export function parseRubricValue(value: unknown, field = 'rubric'): unknown {
  if (typeof value !== 'string') return value;
  const parsed = parseInputJson(value);
  if (!parsed.ok) throw new RubricateError('INPUT_INVALID', `rubric string is not valid JSON: ${parsed.error}`, { field });
  return parsed.value;
}

const cachedRubricId = '\u0000cached';

/** One native item: `{id?, prompt, response, rubric | rubric_id, reference?, tags?, metadata?}`. */
export function parseScoreItem(input: unknown, context: ItemInputContext = {}): Item {
  try {
    if (!isRecord(input)) throw new RubricateError('INPUT_INVALID', 'an item must be a JSON object');
    const hasId = input.id !== undefined && input.id !== null && input.id !== '';
    const record: Record<string, unknown> = { ...input, id: hasId ? input.id : 'pending' };
    let rubrics = context.rubrics;
    if (record.rubric === null) delete record.rubric;
    if (record.rubric !== undefined && context.rubricCache) {
      // The rubric comes from the cache; the rest of the item is validated as usual.
      const rubric = context.rubricCache.normalize(record.rubric);
      record.rubric = undefined;
      record.rubric_id = cachedRubricId;
      rubrics = new Map([[cachedRubricId, rubric]]);
    } else if (record.rubric !== undefined) {
      record.rubric = parseRubricValue(record.rubric);
    }
    const item = normalizeItem(record, { rubrics });
    if (!hasId) item.id = derivedItemId(item);
    return item;
  } catch (error) {
    throw prefixField(error, context.field);
  }
}

const promptSchema = z.union([z.string(), z.array(messageInputSchema).min(1, 'prompt needs at least one message')]);

export interface GroupInput {
  id: string;
  prompt: Message[];
  rubric: Rubric;
  reference?: string;
  responses: string[];
  /** Responses given as agent trajectories (messages), by index; their rendering is in `responses`. */
  trajectories?: Array<Trajectory | undefined>;
}

/** A group's response: text, or an agent trajectory (messages), validated and rendered as an item's would be. */
function groupResponse(response: unknown, index: number): { text: string; trajectory?: Trajectory } {
  if (typeof response === 'string') return { text: response };
  if (!Array.isArray(response)) throw new RubricateError('INPUT_INVALID', 'expected a string or a trajectory (a list of messages)', { field: `responses[${index}]` });
  const parsed = trajectoryInputSchema.safeParse(response);
  if (!parsed.success) throw new RubricateError('INPUT_INVALID', parsed.error.issues[0]?.message ?? 'invalid trajectory', { field: `responses[${index}]${parsed.error.issues[0] ? formatPath(parsed.error.issues[0].path) : ''}` });
  const trajectory = normalizeTrajectory(parsed.data, { fieldPrefix: `responses[${index}]` });
  return { text: renderTrajectory(trajectory), trajectory };
}

/** The shared part of a group request: one prompt and rubric, many responses. */
export function parseGroupInput(input: Record<string, unknown>, context: ItemInputContext = {}): GroupInput {
  const prompt = promptSchema.safeParse(input.prompt);
  if (!prompt.success) throw zodIssueError(prompt.error, { prefix: 'prompt: ', field: 'prompt' });
  let rubric: Rubric;
  if (input.rubric !== undefined) {
    rubric = context.rubricCache ? context.rubricCache.normalize(input.rubric) : normalizeRubric(parseRubricValue(input.rubric), { fieldPrefix: 'rubric' });
  } else if (input.rubric_id !== undefined) {
    const found = context.rubrics?.get(String(input.rubric_id));
    if (!found) throw new RubricateError('INPUT_INVALID', `unknown rubric_id "${String(input.rubric_id)}"`, { field: 'rubric_id' });
    rubric = found;
  } else {
    throw new RubricateError('INPUT_INVALID', 'a group needs either `rubric` or `rubric_id`', { field: 'rubric' });
  }
  if (!Array.isArray(input.responses) || input.responses.length === 0) {
    throw new RubricateError('INPUT_INVALID', '`responses` must be a non-empty list of strings', { field: 'responses' });
  }
  const parsed = input.responses.map(groupResponse);
  const responses = parsed.map((response) => response.text);
  const trajectories = parsed.some((response) => response.trajectory) ? parsed.map((response) => response.trajectory) : undefined;
  if (hasStepCriteria(rubric)) {
    const index = parsed.findIndex((response) => !response.trajectory?.some((message) => message.role === 'assistant'));
    if (index >= 0) throw new RubricateError('INPUT_INVALID', 'step-scoped criteria (scope "step") grade the steps of an agent trajectory: give each response as messages with an assistant message', { field: `responses[${index}]` });
  }
  if (input.reference !== undefined && typeof input.reference !== 'string') {
    throw new RubricateError('INPUT_INVALID', 'expected a string', { field: 'reference' });
  }
  const messages = normalizeMessages(prompt.data);
  const id =
    typeof input.id === 'string' || typeof input.id === 'number'
      ? String(input.id)
      : `group_${createHash('sha256').update(memoizedRubricHash(rubric)).update(JSON.stringify(messages)).digest('hex').slice(0, 16)}`;
  return { id, prompt: messages, rubric, ...(typeof input.reference === 'string' ? { reference: input.reference } : {}), responses, ...(trajectories ? { trajectories } : {}) };
}

export function groupItems(group: GroupInput): Item[] {
  return group.responses.map((response, index) => ({
    id: `${group.id}/${index}`,
    prompt: group.prompt,
    response,
    rubric: group.rubric,
    ...(group.reference !== undefined ? { reference: group.reference } : {}),
    ...(group.trajectories?.[index] ? { trajectory: group.trajectories[index] } : {}),
  }));
}
