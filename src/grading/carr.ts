/**
 * CaRR (THUDM's citation-aware rubric rewards) as three grading strategies, so that its judge
 * calls go through the engine like any other (store, dedupe, retries, re-asking unreadable
 * replies, usage). The prompts are ours; their structure and the replies they ask for follow the
 * released reward server:
 *
 * - `carr-outcome`: is the response's final answer the reference answer (a reply with
 *   `extracted_final_answer:` and `correct: yes|no`, both required);
 * - `carr-entities`: one call naming the hidden entities `<E0>…<En>` of the rubrics, as a fenced
 *   JSON object with exactly those keys, each a string or null (the strings "null"/"none" are unreadable);
 * - `carr-support`: one call marking each filled rubric `S1…Sn` supported by the cited pages or not,
 *   a fenced JSON object with exactly those keys, each a boolean.
 *
 * A reply that does not have that shape is JUDGE_UNPARSEABLE, asked again, then reported: the
 * released server scores such a request 0, we never do (see docs/rl-integration.md).
 * Each stage's data rides on the item's `metadata.carr`.
 */
import { RubricateError } from '../errors.js';
import type { JudgeReply } from '../judges/types.js';
import type { Criterion, Item } from '../rubric/schema.js';
import { isRecord } from '../util/is-record.js';
import { fenceText } from './render.js';
import type { CriterionVerdict, GradingStrategy, JudgeTask, SamplingOptions, TaskDecision } from './types.js';
import { requestSampling } from './sampling.js';

export interface CarrStageData {
  question: string;
  /** `carr-outcome`: the reference answer. */
  answer?: string;
  /** `carr-entities`: the rubrics as written, with their `<E…>` placeholders. */
  rubrics?: string[];
  /** `carr-support`: the citation context (the cited pages as the tool history showed them). */
  context?: string;
}

const entityPattern = /<(E\d+)>/g;

/** The entity ids the rubrics use, in numeric order, each once (E0 is the answer). */
export function rubricEntityIds(rubrics: readonly string[]): string[] {
  const ids = new Set<string>();
  for (const rubric of rubrics) for (const match of rubric.matchAll(entityPattern)) ids.add(match[1]);
  return [...ids].sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
}

function stageData(item: Item): CarrStageData {
  const data = item.metadata?.carr;
  if (!isRecord(data) || typeof data.question !== 'string') throw new RubricateError('INTERNAL', `item ${item.id} has no CaRR stage data`);
  return data as unknown as CarrStageData;
}

function unreadable(criteria: Criterion[], why: string): TaskDecision {
  const error = new RubricateError('JUDGE_UNPARSEABLE', `CaRR judge reply: ${why}`);
  return { verdicts: new Map(), errors: new Map(criteria.map((criterion) => [criterion.id, error])) };
}

/** The first fenced `json` block of a reply, parsed (undefined: none, or not JSON). */
function fencedJson(text: string): unknown {
  const match = /```json\s*([\s\S]*?)\s*```/i.exec(text);
  if (!match) return undefined;
  try {
    return JSON.parse(match[1].trim()) as unknown;
  } catch {
    return undefined;
  }
}

function sameKeys(value: Record<string, unknown>, ids: readonly string[]): boolean {
  const keys = Object.keys(value);
  return keys.length === ids.length && ids.every((id) => Object.hasOwn(value, id));
}

function task(item: Item, criteria: Criterion[], templateVersion: string, sampling: SamplingOptions, prompt: string, decide: JudgeTask['decide']): JudgeTask {
  return {
    item,
    criteria,
    templateVersion,
    request: { messages: [{ role: 'user', content: prompt }], ...requestSampling(sampling) },
    decide,
  };
}

function outcomePrompt(data: CarrStageData, response: string): string {
  return [
    'Decide whether a response to a question is correct, judged only against the reference answer below.',
    `Question:\n${fenceText('question', data.question)}`,
    `Response:\n${fenceText('response', response)}`,
    `Reference answer:\n${fenceText('reference', data.answer ?? '')}`,
    'Reply in exactly this layout, one field per line:',
    "extracted_final_answer: the response's final answer, exactly as it stands; None when it gives none",
    'reasoning: only whether that answer and the reference answer differ in any way that matters (numbers may differ within a small margin); do not solve the question again',
    'correct: yes if they match, no otherwise (any inconsistency, ambiguity or non-equivalence is no)',
  ].join('\n\n');
}

export function createCarrOutcomeStrategy(sampling: SamplingOptions): GradingStrategy {
  const templateVersion = 'carr-outcome-v1';
  return {
    name: 'carr-outcome',
    templateVersion,
    plan(item, criteria) {
      const data = stageData(item);
      return [
        task(item, criteria, templateVersion, sampling, outcomePrompt(data, item.response), (reply: JudgeReply) => {
          const correct = /\*{0,2}correct\*{0,2}\s*:\s*(no|yes)/i.exec(reply.text);
          const extracted = /\*{0,2}extracted_final_answer\*{0,2}\s*:\s*(.+)/i.exec(reply.text);
          if (!correct || !extracted) return unreadable(criteria, 'no `correct: yes|no` and `extracted_final_answer:` lines');
          const met = correct[1].toLowerCase() === 'yes';
          const verdict: CriterionVerdict = { met, value: met ? 1 : 0, source: 'judge', explanation: extracted[1].trim() };
          return { verdicts: new Map(criteria.map((criterion) => [criterion.id, verdict])), errors: new Map() };
        }),
      ];
    },
  };
}

function entitiesPrompt(data: CarrStageData, response: string, ids: readonly string[]): string {
  const constraints = (data.rubrics ?? []).map((rubric, index) => `C${index + 1}. ${rubric}`).join('\n');
  return [
    'A multi-hop question was split into single-hop constraints. In them, <E0> stands for the final answer and <E1>, <E2>, … for the intermediate entities.',
    `Question:\n${fenceText('question', data.question)}`,
    `Constraints:\n${fenceText('constraints', constraints)}`,
    `Assistant's response:\n${fenceText('response', response)}`,
    `Name the real identity the response states for each of ${ids.map((id) => `<${id}>`).join(', ')}. Use only what the response states explicitly and without ambiguity; never infer or guess. An entity the response does not clearly identify is null.`,
    `First explain, entity by entity, what the response says. Then end with a fenced json block whose keys are exactly ${ids.map((id) => `"${id}"`).join(', ')}, each the identity as a string, or null:`,
    '```json\n{"E0": "…", "E1": null}\n```',
  ].join('\n\n');
}

/** The identities a reply names (null: not identified), or why the reply cannot be read. */
export function readEntityValues(content: string, ids: readonly string[]): Map<string, string | null> | string {
  const value = fencedJson(content);
  if (!isRecord(value)) return 'no fenced json object';
  if (!sameKeys(value, ids)) return `the json keys are not exactly ${ids.join(', ')}`;
  const values = new Map<string, string | null>();
  for (const id of ids) {
    const entity = value[id];
    if (entity !== null && typeof entity !== 'string') return `${id} is neither a string nor null`;
    if (typeof entity === 'string' && ['null', 'none'].includes(entity.trim().toLowerCase())) return `${id} is the string "${entity}" rather than null`;
    values.set(id, entity);
  }
  return values;
}

export function createCarrEntityStrategy(sampling: SamplingOptions): GradingStrategy {
  const templateVersion = 'carr-entities-v1';
  return {
    name: 'carr-entities',
    templateVersion,
    plan(item, criteria) {
      const data = stageData(item);
      const ids = criteria.map((criterion) => criterion.id);
      return [
        task(item, criteria, templateVersion, sampling, entitiesPrompt(data, item.response, ids), (reply) => {
          const values = readEntityValues(reply.text, ids);
          if (typeof values === 'string') return unreadable(criteria, values);
          // The identity named is the verdict's explanation: met when the entity was identified.
          const verdicts = new Map<string, CriterionVerdict>();
          for (const [id, entity] of values) verdicts.set(id, entity === null ? { met: false, value: 0, source: 'judge' } : { met: true, value: 1, source: 'judge', explanation: entity });
          return { verdicts, errors: new Map() };
        }),
      ];
    },
  };
}

function supportPrompt(data: CarrStageData, criteria: Criterion[]): string {
  const statements = criteria.map((criterion) => `${criterion.id}. ${criterion.text}`).join('\n');
  return [
    'Below are the contents of several web pages and some single-hop factual statements. Decide for each statement whether the pages fully support it.',
    `Web pages:\n${fenceText('webpages', data.context ?? '')}`,
    `Statements:\n${fenceText('statements', statements)}`,
    'For each statement: quote the evidence that supports or contradicts it, explain why it is or is not fully supported, list the URLs the evidence comes from, and conclude "Fully supported: yes" or "Fully supported: no".',
    `End with a fenced json block whose keys are exactly ${criteria.map((criterion) => `"${criterion.id}"`).join(', ')}, each true (fully supported) or false:`,
    '```json\n{"S1": true, "S2": false}\n```',
  ].join('\n\n');
}

/** Which statements a reply marks supported, or why the reply cannot be read. */
export function readSupport(content: string, ids: readonly string[]): Map<string, boolean> | string {
  const value = fencedJson(content);
  if (!isRecord(value)) return 'no fenced json object';
  if (!sameKeys(value, ids)) return `the json keys are not exactly ${ids.join(', ')}`;
  const marks = new Map<string, boolean>();
  for (const id of ids) {
    const mark = value[id];
    if (typeof mark !== 'boolean') return `${id} is not true or false`;
    marks.set(id, mark);
  }
  return marks;
}

export function createCarrSupportStrategy(sampling: SamplingOptions): GradingStrategy {
  const templateVersion = 'carr-support-v1';
  return {
    name: 'carr-support',
    templateVersion,
    plan(item, criteria) {
      const data = stageData(item);
      const ids = criteria.map((criterion) => criterion.id);
      return [
        task(item, criteria, templateVersion, sampling, supportPrompt(data, criteria), (reply) => {
          const marks = readSupport(reply.text, ids);
          if (typeof marks === 'string') return unreadable(criteria, marks);
          const verdicts = new Map<string, CriterionVerdict>();
          for (const [id, supported] of marks) verdicts.set(id, { met: supported, value: supported ? 1 : 0, source: 'judge' });
          return { verdicts, errors: new Map() };
        }),
      ];
    },
  };
}
