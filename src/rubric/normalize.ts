/**
 * Validation at the edge: untrusted records in, normalised Rubric / Item out, or a
 * RubricateError naming the field. Criterion ids are stable: taken from the input, or
 * derived from the criterion text so the same rubric always gets the same ids.
 */
import { z } from 'zod';
import { RubricateError } from '../errors.js';
import { sha256Hex } from '../util/hash.js';
import { fieldPath, zodIssueError } from '../util/zod-issue.js';
import {
  contentPartSchema,
  criterionInputSchema,
  itemInputSchema,
  rubricInputSchema,
  type Criterion,
  type Item,
  type Message,
  type Rubric,
} from './schema.js';
import { memoizedRubricHash } from './hashing.js';
import { pointsForImportance } from './importance.js';
import { normalizeTrajectory, trajectoryInputSchema, type TrajectoryMessageInput } from '../trajectory/trajectory.js';
import { dataUrlBytes, imagePlaceholder, isDataUrl, onlyDataUrls, toItemImage, type ImagePlace, type ItemImage } from '../images/images.js';
import { renderTrajectory } from '../trajectory/render.js';
import { hasPerTurnCriteria, turnProblem } from './turns.js';
import { normalizeStepAggregate, stepProblem, stepScopeProblem } from './steps.js';
import { hasConditions, normalizeConditions, validateConditions } from './conditions.js';

export interface SourceLocation {
  file?: string;
  line?: number;
  /** Prefix for field paths when the record sits inside a larger one (e.g. `rubric`). */
  fieldPrefix?: string;
}

/** Turns zod issues into one INPUT_INVALID error that names the first offending field. */
export function zodErrorToInputError(error: z.ZodError, location: SourceLocation): RubricateError {
  return zodIssueError(error, { record: true, indexed: true, under: location.fieldPrefix ? [location.fieldPrefix] : [], details: { file: location.file, line: location.line } });
}

export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  return fieldPath(path);
}

/** Derived criterion id: short, stable, and only dependent on the criterion text. */
export function deriveCriterionId(text: string): string {
  return `c_${sha256Hex(text).slice(0, 10)}`;
}

/**
 * A copy without the `null` values of objects, at every depth but inside `metadata` (kept as
 * given). A rubric stored as a dict column (datasets, parquet, Arrow) has every key any row
 * has, absent ones filled with null; no rubric field takes null, so null reads as absent.
 */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value === null || typeof value !== 'object') return value;
  const copy: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(value)) {
    // Defined, not assigned: a "__proto__" key stays a key (and is refused by the schema by name).
    if (entry !== null) Object.defineProperty(copy, key, { value: key === 'metadata' ? entry : withoutNulls(entry), enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

/** Process rewards: the rubric's `step_aggregate`, and its step-scoped criteria checked as declared (src/rubric/steps.ts). */
function applyStepSettings(rubric: Rubric, stepAggregate: z.output<typeof rubricInputSchema>['step_aggregate'], location: SourceLocation): void {
  if (stepAggregate !== undefined) rubric.stepAggregate = normalizeStepAggregate(stepAggregate);
  const problem = stepScopeProblem(rubric);
  if (problem) throw new RubricateError('INPUT_INVALID', problem.message, { file: location.file, line: location.line, field: formatPath([...(location.fieldPrefix ? [location.fieldPrefix] : []), ...problem.path]) });
}

/** Top-level optional fields of an item that a columnar dataset fills with null. */
const optionalItemFields = ['rubric', 'rubric_id', 'reference', 'tags', 'metadata'] as const;

/**
 * A rubric from untrusted input, normalised (criterion ids, points, conditions) or an INPUT_INVALID error naming the field.
 *
 * @example
 * ```ts
 * import { normalizeRubric } from 'rubricate';
 * const rubric = normalizeRubric({ criteria: [{ text: 'Cites a source', points: 2 }, { text: 'Insults the user', points: -5 }] });
 * console.log(rubric.id, rubric.criteria.length);
 * ```
 */
export function normalizeRubric(input: unknown, location: SourceLocation = {}): Rubric {
  const parsed = rubricInputSchema.safeParse(withoutNulls(input));
  if (!parsed.success) throw zodErrorToInputError(parsed.error, location);
  return rubricFromParsed(parsed.data, location);
}

/**
 * A rubric from the schema's output (an item's `rubric` comes out of the item schema already
 * parsed: parsing it again would give the same value, so it is not).
 */
function rubricFromParsed(value: z.output<typeof rubricInputSchema>, location: SourceLocation): Rubric {
  const seenIds = new Set<string>();
  const criteria: Criterion[] = value.criteria.map((criterion, index) => {
    let id: string;
    if (criterion.id !== undefined) {
      id = String(criterion.id);
      if (seenIds.has(id)) {
        throw new RubricateError('INPUT_INVALID', `duplicate criterion id "${id}"`, {
          file: location.file,
          line: location.line,
          field: formatPath([...(location.fieldPrefix ? [location.fieldPrefix] : []), 'criteria', index, 'id']),
        });
      }
    } else {
      // Two criteria with the same text get the same derived id; suffix the repeats.
      const base = deriveCriterionId(criterion.text);
      id = base;
      for (let suffix = 2; seenIds.has(id); suffix += 1) id = `${base}_${suffix}`;
    }
    seenIds.add(id);
    let points = criterion.points ?? 1;
    let tags = criterion.tags;
    if (criterion.importance !== undefined) {
      try {
        if (criterion.points === undefined) points = pointsForImportance(criterion.importance, value.importance_scheme, value.importance_points);
      } catch (error) {
        throw new RubricateError('INPUT_INVALID', (error as Error).message, {
          file: location.file,
          line: location.line,
          field: formatPath([...(location.fieldPrefix ? [location.fieldPrefix] : []), 'criteria', index, 'importance']),
        });
      }
      const tag = `importance:${criterion.importance.trim().toLowerCase()}`;
      if (!tags.includes(tag)) tags = [...tags, tag];
    }
    const normalized: Criterion = {
      id,
      text: criterion.text,
      points,
      tags,
      kind: criterion.kind,
    };
    if (criterion.scale && criterion.scale.type !== 'binary') normalized.scale = criterion.scale;
    if (criterion.check) normalized.check = criterion.check;
    if (criterion.subchecks) {
      normalized.subchecks = criterion.subchecks;
      normalized.subcheckRule = criterion.subcheckRule ?? 'all';
      if (criterion.subcheckPenalty !== undefined) normalized.subcheckPenalty = criterion.subcheckPenalty;
    }
    // `last` is the default: left out, so the rubric hashes as it did before turns existed.
    if (criterion.turn !== undefined && criterion.turn !== 'last') normalized.turn = criterion.turn;
    if (criterion.when !== undefined) normalized.when = normalizeConditions(criterion.when);
    if (criterion.scope === 'step') normalized.scope = 'step';
    if (criterion.metadata) normalized.metadata = criterion.metadata;
    return normalized;
  });
  return assembleRubric(value, criteria, location);
}

/** A rubric from its normalised criteria: point totals, conditions and the gate checked, reward components read, its id given or hashed. */
function assembleRubric(value: z.output<typeof rubricInputSchema>, criteria: Criterion[], location: SourceLocation): Rubric {
  // Scores divide by these sums: an overflow to Infinity would silently turn every score into 0 or NaN.
  let positive = 0;
  let negative = 0;
  for (const criterion of criteria) {
    if (criterion.points > 0) positive += criterion.points;
    else negative += criterion.points;
  }
  if (!Number.isFinite(positive) || !Number.isFinite(negative)) {
    throw new RubricateError('INPUT_INVALID', `the criteria's ${Number.isFinite(positive) ? 'negative' : 'positive'} points add up to more than the largest representable number: use smaller points`, {
      file: location.file,
      line: location.line,
      field: formatPath([...(location.fieldPrefix ? [location.fieldPrefix] : []), 'criteria']),
    });
  }
  const rubric: Rubric = { id: '', criteria };
  if (value.gate) rubric.gate = value.gate;
  if (hasConditions(rubric)) {
    validateConditions(rubric, {
      file: location.file,
      line: location.line,
      whenField: (index) => formatPath([...(location.fieldPrefix ? [location.fieldPrefix] : []), 'criteria', index, 'when']),
      listed: (index) => Array.isArray(value.criteria[index].when),
    });
  }
  if (value.turn_aggregate) rubric.turnAggregate = value.turn_aggregate;
  if (value.gate && hasPerTurnCriteria(rubric)) {
    // The gate decides an item from its hard rules; with criteria on several turns there is no one item to gate.
    throw new RubricateError('INPUT_INVALID', 'a hard-rule gate cannot be combined with per-turn criteria (turn "every" or a turn number)', {
      file: location.file,
      line: location.line,
      field: formatPath([...(location.fieldPrefix ? [location.fieldPrefix] : []), 'gate']),
    });
  }
  applyStepSettings(rubric, value.step_aggregate, location);
  if (value.reward_components) rubric.rewardComponents = declaredComponents(value.reward_components, criteria, location);
  if (value.metadata) rubric.metadata = value.metadata;
  // Hashed once per rubric: the id is not part of the hash, and results reuse the memo for `rubric_hash`.
  rubric.id = value.id !== undefined ? String(value.id) : `r_${memoizedRubricHash(rubric).slice(0, 12)}`;
  return rubric;
}

/** Cap on declared reward components: each is summed per response and normalised per group. */
export const maxRewardComponents = 64;

/** Declared components, each naming a tag or `criterion:<id>` that the rubric has, with a positive total weight. */
function declaredComponents(weights: Record<string, number>, criteria: readonly Criterion[], location: SourceLocation): Record<string, number> {
  const field = (name?: string) => formatPath([...(location.fieldPrefix ? [location.fieldPrefix] : []), 'reward_components', ...(name === undefined ? [] : [name])]);
  const names = Object.keys(weights);
  const fail = (message: string, name?: string) => new RubricateError('INPUT_INVALID', message, { file: location.file, line: location.line, field: field(name) });
  if (names.length === 0 || names.length > maxRewardComponents) throw fail(`give between 1 and ${maxRewardComponents} reward components, got ${names.length}`);
  for (const name of names) {
    const matches = name.startsWith('criterion:') ? criteria.some((criterion) => criterion.id === name.slice('criterion:'.length)) : criteria.some((criterion) => criterion.tags.includes(name));
    if (!matches) throw fail(`reward component "${name}" names no criterion: use a tag of the rubric's criteria or criterion:<id>`, name);
  }
  if (!(names.reduce((sum, name) => sum + weights[name], 0) > 0)) throw fail('the reward components\' weights must add up to more than 0');
  return { ...weights };
}

export function normalizeMessages(prompt: string | ReadonlyArray<{ role: string; content: unknown }>, location: SourceLocation = {}): Message[] {
  if (typeof prompt === 'string') return [{ role: 'user', content: prompt }];
  return prompt.map((message, index) => ({ role: message.role, content: messageText(message.content, location, index) }));
}

function messageText(content: unknown, location: SourceLocation, messageIndex: number): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part, partIndex) => {
        if (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string') return (part as { text: string }).text;
        // An image or other non-text part would silently vanish from what the judge sees: refuse it.
        const type = part && typeof part === 'object' ? (part as { type?: unknown }).type : undefined;
        throw new RubricateError(
          'INPUT_INVALID',
          `${typeof type === 'string' ? `content part of type "${type}"` : 'a content part without text'} cannot be graded (only text parts are supported); remove it or give its text`,
          { file: location.file, line: location.line, field: formatPath(['prompt', messageIndex, 'content', partIndex]) },
        );
      })
      .filter((text) => text !== '')
      .join('\n');
  }
  return '';
}

type ContentPart = z.infer<typeof contentPartSchema>;

/**
 * Flattens content (a string or parts) to text, each image part's bytes (a data URL decoded,
 * or a file's or URL's read before) putting its placeholder where it stood. Unknown part
 * types are an error, never dropped.
 */
class ImageCollector {
  readonly images: ItemImage[] = [];
  constructor(
    private readonly location: SourceLocation,
    /** Bytes of image files and URLs, read before (`ImageReader`); any other url that is not a data URL is refused. */
    private readonly loaded?: ReadonlyMap<string, Buffer>,
  ) {}

  text(content: string | readonly ContentPart[], place: ImagePlace, field: string): string {
    if (typeof content === 'string') return content;
    const pieces: string[] = [];
    content.forEach((part, index) => {
      const partField = `${field}[${index}]`;
      if (part.type === 'image_url' || (part.type === undefined && part.image_url)) {
        const url = part.image_url?.url;
        const location = { file: this.location.file, line: this.location.line, field: `${partField}.image_url.url` };
        if (!url) throw new RubricateError('INPUT_INVALID', 'an image_url part needs image_url.url', location);
        const bytes = isDataUrl(url) ? dataUrlBytes(url, location) : this.loaded?.get(url);
        if (!bytes) throw new RubricateError('INPUT_INVALID', onlyDataUrls, location);
        const image = toItemImage(bytes, url, place, this.images.length + 1, location);
        this.images.push(image);
        pieces.push(imagePlaceholder(image));
      } else if (part.type === undefined || part.type === 'text' || part.type === 'input_text') {
        if (typeof part.text === 'string' && part.text !== '') pieces.push(part.text);
      } else {
        throw new RubricateError('INPUT_INVALID', `content part of type "${part.type}" is not supported (text and image_url are)`, { file: this.location.file, line: this.location.line, field: `${partField}.type` });
      }
    });
    return pieces.join('\n');
  }
}

export interface NormalizeItemOptions extends SourceLocation {
  rubrics?: ReadonlyMap<string, Rubric>;
  /** Bytes of the record's image files and URLs (`ImageReader.read`); without them only data URLs are accepted. */
  loadedImages?: ReadonlyMap<string, Buffer>;
}

const isIdentifier = (value: unknown) => (typeof value === 'string' && value !== '') || (typeof value === 'number' && Number.isFinite(value));

/**
 * The most common record needs no schema walk: a string prompt and response, a rubric named
 * by a known `rubric_id`, an optional string reference, no tags, metadata or rubric. Anything
 * else (or anything wrong) is undefined here and goes through the schema, which gives the
 * same item or the error.
 */
function plainItem(input: unknown, rubrics: ReadonlyMap<string, Rubric> | undefined): Item | undefined {
  if (rubrics === undefined || input === null || typeof input !== 'object' || Array.isArray(input)) return undefined;
  const record = input as Record<string, unknown>;
  const { id, prompt, response, reference, rubric_id: rubricId } = record;
  if (!isIdentifier(id) || typeof prompt !== 'string' || typeof response !== 'string' || !isIdentifier(rubricId)) return undefined;
  if (record.rubric !== undefined || record.tags !== undefined || record.metadata !== undefined || (reference !== undefined && typeof reference !== 'string')) return undefined;
  const rubric = rubrics.get(String(rubricId));
  if (!rubric || hasPerTurnCriteria(rubric)) return undefined;
  const item: Item = { id: String(id), prompt: [{ role: 'user', content: prompt }], response, rubric };
  if (reference !== undefined) item.reference = reference;
  return item;
}

const plainInlineItemKeys = new Set(['id', 'prompt', 'response', 'rubric', 'reference', 'tags']);
const plainRubricKeys = new Set(['id', 'criteria']);
const plainCriterionKeys = new Set(['id', 'text', 'points', 'tags', 'kind']);

/** Only the given keys, none of them undefined (an undefined member goes through the schema). */
function hasOnlyKeys(value: unknown, keys: ReadonlySet<string>): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return false;
  for (const key of Object.keys(value)) if (!keys.has(key) || (value as Record<string, unknown>)[key] === undefined) return false;
  return true;
}

/** A list of tags as the schema gives it back (a copy), or undefined for anything it would refuse. */
function plainTags(tags: unknown): string[] | undefined {
  if (!Array.isArray(tags)) return undefined;
  for (const tag of tags) if (typeof tag !== 'string' || tag === '__proto__') return undefined;
  return [...tags];
}

/**
 * An inline rubric of plain criteria (id, text, points, tags, kind) read without the schema
 * walk: exactly what the rubric schema gives back for it (texts trimmed, `tags` and `kind`
 * defaulted), or undefined for anything else, which the schema then reads or refuses.
 */
function plainParsedRubric(input: unknown): z.output<typeof rubricInputSchema> | undefined {
  if (!hasOnlyKeys(input, plainRubricKeys) || (input.id !== undefined && !isIdentifier(input.id))) return undefined;
  const { criteria } = input;
  if (!Array.isArray(criteria) || criteria.length === 0) return undefined;
  const parsed: z.output<typeof criterionInputSchema>[] = [];
  for (const criterion of criteria as unknown[]) {
    if (!hasOnlyKeys(criterion, plainCriterionKeys)) return undefined;
    const { id, text, points, tags, kind } = criterion;
    if ((id !== undefined && !isIdentifier(id)) || typeof text !== 'string' || (points !== undefined && (typeof points !== 'number' || !Number.isFinite(points)))) return undefined;
    const trimmed = text.trim();
    const tagList = tags === undefined ? [] : plainTags(tags);
    if (trimmed === '' || tagList === undefined || (kind !== undefined && kind !== 'principle' && kind !== 'hard_rule')) return undefined;
    const entry: z.output<typeof criterionInputSchema> = { text: trimmed, tags: tagList, kind: kind ?? 'principle' };
    if (id !== undefined) entry.id = id as string | number;
    if (points !== undefined) entry.points = points;
    parsed.push(entry);
  }
  const rubric: z.output<typeof rubricInputSchema> = { criteria: parsed };
  if (input.id !== undefined) rubric.id = input.id as string | number;
  return rubric;
}

/**
 * The next most common record: string prompt, response and reference, item tags and an
 * inline rubric of plain criteria. Undefined for anything else, which goes through the schema.
 */
function plainInlineItem(input: unknown, options: NormalizeItemOptions): Item | undefined {
  if (!hasOnlyKeys(input, plainInlineItemKeys)) return undefined;
  const { id, prompt, response, reference } = input;
  if (!isIdentifier(id) || typeof prompt !== 'string' || typeof response !== 'string' || (reference !== undefined && typeof reference !== 'string')) return undefined;
  const tags = input.tags === undefined ? undefined : plainTags(input.tags);
  const parsedRubric = plainParsedRubric(input.rubric);
  if ((input.tags !== undefined && tags === undefined) || parsedRubric === undefined) return undefined;
  const item: Item = { id: String(id), prompt: [{ role: 'user', content: prompt }], response, rubric: rubricFromParsed(parsedRubric, { ...options, fieldPrefix: 'rubric' }) };
  if (reference !== undefined) item.reference = reference;
  if (tags) item.tags = tags;
  return item;
}

/**
 * Validates one canonical item record (the `items` format).
 *
 * @example
 * ```ts
 * import { normalizeItem } from 'rubricate';
 * const item = normalizeItem({ id: 'q1', prompt: 'What is 2 + 2?', response: '4', rubric: { criteria: [{ text: 'Answers 4' }] } });
 * console.log(item.rubric.criteria[0].id);
 * ```
 */
export function normalizeItem(record: unknown, options: NormalizeItemOptions = {}): Item {
  let input = record;
  if (input !== null && typeof input === 'object' && !Array.isArray(input)) {
    const fields = input as Record<string, unknown>;
    if (optionalItemFields.some((field) => fields[field] === null) || (typeof fields.rubric === 'object' && fields.rubric !== null)) {
      const copy: Record<string, unknown> = { ...fields };
      for (const field of optionalItemFields) if (copy[field] === null) delete copy[field];
      if (copy.rubric !== undefined) copy.rubric = withoutNulls(copy.rubric);
      input = copy;
    }
  }
  const plain = plainItem(input, options.rubrics);
  if (plain) return plain;
  const inline = plainInlineItem(input, options);
  if (inline) return withoutItemProblem(inline, options);
  const rawResponse = input !== null && typeof input === 'object' ? (input as { response?: unknown }).response : undefined;
  const responseParts = Array.isArray(rawResponse) && rawResponse.length > 0 && rawResponse.every((entry) => entry !== null && typeof entry === 'object' && !('role' in entry));
  if (responseParts) {
    const parts = z.array(contentPartSchema).safeParse(rawResponse);
    if (!parts.success) throw zodErrorToInputError(parts.error, { ...options, fieldPrefix: 'response' });
  } else if (Array.isArray(rawResponse)) {
    // A union error would only say "response is invalid": validate the messages alone to name the field.
    const messages = trajectoryInputSchema.safeParse(rawResponse);
    if (!messages.success) throw zodErrorToInputError(messages.error, { ...options, fieldPrefix: 'response' });
  } else if (rawResponse !== undefined && typeof rawResponse !== 'string') {
    const text = z.string().safeParse(rawResponse);
    if (!text.success) throw zodErrorToInputError(text.error, { ...options, fieldPrefix: 'response' });
  }
  const parsed = itemInputSchema.safeParse(input);
  if (!parsed.success) throw zodErrorToInputError(parsed.error, options);
  const value = parsed.data;
  let rubric: Rubric;
  if (value.rubric !== undefined) {
    rubric = rubricFromParsed(value.rubric, { ...options, fieldPrefix: 'rubric' });
  } else {
    const rubricId = String(value.rubric_id);
    const found = options.rubrics?.get(rubricId);
    if (!found) {
      throw new RubricateError(
        'INPUT_INVALID',
        options.rubrics
          ? `unknown rubric_id "${rubricId}" (not in the rubrics file)`
          : `rubric_id "${rubricId}" given but no rubrics file (--rubrics FILE)`,
        { file: options.file, line: options.line, field: 'rubric_id' },
      );
    }
    rubric = found;
  }
  const images = new ImageCollector(options, options.loadedImages);
  const prompt: Message[] =
    typeof value.prompt === 'string' ? [{ role: 'user', content: value.prompt }] : value.prompt.map((message, index) => ({ role: message.role, content: images.text(message.content, 'prompt', `prompt[${index}].content`) }));
  const trajectory = typeof value.response === 'string' || responseParts ? undefined : normalizeTrajectory(value.response as TrajectoryMessageInput[], { file: options.file, line: options.line });
  const item: Item = {
    id: String(value.id),
    prompt,
    response: trajectory ? renderTrajectory(trajectory) : images.text(value.response as string | ContentPart[], 'response', 'response'),
    rubric,
  };
  if (trajectory) item.trajectory = trajectory;
  if (value.reference !== undefined) item.reference = images.text(value.reference, 'reference', 'reference');
  if (images.images.length > 0) item.images = images.images;
  if (value.tags) item.tags = value.tags;
  if (value.metadata) item.metadata = value.metadata;
  return withoutItemProblem(item, options);
}

/** The item, unless its rubric asks for turns or steps it does not have. */
function withoutItemProblem(item: Item, options: NormalizeItemOptions): Item {
  const problem = turnProblem(item) ?? stepProblem(item);
  if (problem) throw new RubricateError('INPUT_INVALID', problem.message, { file: options.file, line: options.line, field: problem.field });
  return item;
}
