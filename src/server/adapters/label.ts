/**
 * The rubric a trainer sends with each sample (OpenRLHF `labels[i]`, slime `label`):
 *   - a rubric object `{criteria: [...]}`;
 *   - a string holding one (JSON);
 *   - an object `{rubric, reference?, prompt?}` (rubric as object or JSON string), or
 *     `{rubric_id, ...}` naming a rubric of `serve --rubrics FILE`.
 * `prompt` in the label (string or messages) replaces the prompt recovered from the template.
 */
import { RubricateError } from '../../errors.js';
import { normalizeMessages, normalizeRubric } from '../../rubric/normalize.js';
import { messageInputSchema, type Message, type Rubric } from '../../rubric/schema.js';
import { safeParseJson } from '../../util/json.js';
import { z } from 'zod';
import { isRecord } from '../../util/is-record.js';

export interface LabelContent {
  rubric: Rubric;
  reference?: string;
  prompt?: Message[];
}

const promptSchema = z.union([z.string(), z.array(messageInputSchema).min(1)]);

function parseLabelValue(label: unknown, rubrics: ReadonlyMap<string, Rubric> | undefined, field: string): LabelContent {
  if (typeof label === 'string') {
    const parsed = safeParseJson(label);
    if (!parsed.ok || !isRecord(parsed.value)) {
      throw new RubricateError('INPUT_INVALID', 'the label must hold a rubric: a JSON object with `criteria`, or {"rubric": …}', { field });
    }
    return parseLabelValue(parsed.value, rubrics, field);
  }
  if (!isRecord(label)) throw new RubricateError('INPUT_INVALID', 'the label must hold a rubric: a JSON object with `criteria`, or {"rubric": …}', { field });
  if (Array.isArray(label.criteria)) return { rubric: normalizeRubric(label, { fieldPrefix: field }) };
  let rubric: Rubric;
  // A label stored as a dict column has every key, absent ones null (Arrow): null reads as absent.
  if (label.rubric !== undefined && label.rubric !== null) {
    let value: unknown = label.rubric;
    if (typeof value === 'string') {
      const parsed = safeParseJson(value);
      if (!parsed.ok) throw new RubricateError('INPUT_INVALID', `rubric string is not valid JSON: ${parsed.error}`, { field: `${field}.rubric` });
      value = parsed.value;
    }
    rubric = normalizeRubric(value, { fieldPrefix: `${field}.rubric` });
  } else if (label.rubric_id !== undefined && label.rubric_id !== null) {
    const found = rubrics?.get(String(label.rubric_id));
    if (!found) throw new RubricateError('INPUT_INVALID', `unknown rubric_id "${String(label.rubric_id)}"`, { field: `${field}.rubric_id` });
    rubric = found;
  } else {
    throw new RubricateError('INPUT_INVALID', 'the label has no rubric (`criteria`, `rubric` or `rubric_id`)', { field });
  }
  const content: LabelContent = { rubric };
  if (label.reference !== undefined && label.reference !== null) {
    if (typeof label.reference !== 'string') throw new RubricateError('INPUT_INVALID', 'expected a string', { field: `${field}.reference` });
    content.reference = label.reference;
  }
  if (label.prompt !== undefined && label.prompt !== null) {
    const prompt = promptSchema.safeParse(label.prompt);
    if (!prompt.success) throw new RubricateError('INPUT_INVALID', 'expected a string or a list of {role, content} messages', { field: `${field}.prompt` });
    content.prompt = normalizeMessages(prompt.data);
  }
  return content;
}

export type LabelParser = (label: unknown, field?: string) => LabelContent;

/**
 * A parser with its own small cache: a group sends the same label string for each of its
 * samples, so each distinct string is normalised once.
 */
export function createLabelParser(rubrics?: ReadonlyMap<string, Rubric>, cacheSize = 512): LabelParser {
  const cache = new Map<string, LabelContent>();
  return (label, field = 'label') => {
    if (typeof label !== 'string') return parseLabelValue(label, rubrics, field);
    const cached = cache.get(label);
    if (cached) return cached;
    const content = parseLabelValue(label, rubrics, field);
    if (cache.size >= cacheSize) cache.delete(cache.keys().next().value!);
    cache.set(label, content);
    return content;
  };
}
