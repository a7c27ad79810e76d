/**
 * `replay:FILE`: a judge that answers from verdicts a real judge recorded earlier, so grade,
 * meta, align, rejudge and report run on published judge outputs without calling a model.
 * FILE is JSON lines, one verdict per (item, criterion):
 *
 *     {"judge": "gpt-4o", "id": "q49/p3659", "criterion_id": "relevant", "met": true}
 *     {"judge": "gpt-4o", "id": "q49/p3659", "criterion_id": "relevant", "probability": 0.81}
 *     {"judge": "gpt-4o", "id": "d1", "criterion_id": "Q0", "choice": "3"}
 *     {"judge": "gpt-4o", "id": "d1", "criterion_id": "Q0", "distribution": {"1": 0.1, "2": 0.2, "3": 0.3, "4": 0.4}}
 *
 * A binary criterion takes `met` or `probability` (P(met), given as the reply's token
 * probabilities, so `--verdict probability` reads it back); an ordinal one takes `choice` or
 * `distribution` over its labels (the most probable label is the choice, the distribution its
 * token probabilities, so `--verdict expected-score` weighs it as G-Eval does, alternatives under
 * 1% left out). It answers per-criterion and batched grading requests, which name their item
 * and criteria. A verdict missing from the file is JUDGE_NOT_RECORDED for that criterion, never
 * a default; a verdict of the wrong kind for the criterion's scale is JUDGE_UNSUPPORTED.
 *
 * Provenance: id `replay:FILE`, model the recorded judge (every line must name the same one),
 * `replayed` with the file's name and hash, and the same in `settings`, so every result line
 * says the verdicts were replayed, not asked for. The hash is part of every cache key.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { RubricateError } from '../errors.js';
import { isRecord } from '../util/is-record.js';
import { readLines } from '../util/jsonl.js';
import { parseInputJson } from '../util/json.js';
import type { Judge, JudgeReply, JudgeRequest, TokenProbability } from './types.js';

/** Bound on the verdicts one file may hold: the judge keeps them all in memory. */
export const maxReplayedVerdicts = 5_000_000;

type RecordedVerdict = { kind: 'met'; met: boolean } | { kind: 'probability'; probability: number } | { kind: 'choice'; choice: string } | { kind: 'distribution'; distribution: Map<string, number> };

/** The text every replayed explanation carries. */
export const replayedLabel = 'replayed verdict: recorded earlier from this judge, no model was asked now';

function keyOf(item: string, criterion: string): string {
  return `${item}\u0000${criterion}`;
}

function readVerdict(value: Record<string, unknown>, file: string, line: number): RecordedVerdict {
  const fields = ['met', 'probability', 'choice', 'distribution'].filter((field) => value[field] !== undefined);
  if (fields.length !== 1) throw new RubricateError('INPUT_INVALID', `a recorded verdict needs exactly one of met, probability, choice, distribution (found ${fields.length === 0 ? 'none' : fields.join(', ')})`, { file, line, field: fields[1] ?? 'met' });
  const [field] = fields;
  const raw = value[field];
  if (field === 'met') {
    if (typeof raw !== 'boolean') throw new RubricateError('INPUT_INVALID', 'met must be true or false', { file, line, field });
    return { kind: 'met', met: raw };
  }
  if (field === 'probability') {
    if (typeof raw !== 'number' || !(raw >= 0 && raw <= 1)) throw new RubricateError('INPUT_INVALID', 'probability must be a number from 0 to 1', { file, line, field });
    return { kind: 'probability', probability: raw };
  }
  if (field === 'choice') {
    if (typeof raw !== 'string' && typeof raw !== 'number') throw new RubricateError('INPUT_INVALID', 'choice must be a label (a string or a number)', { file, line, field });
    return { kind: 'choice', choice: String(raw) };
  }
  if (!isRecord(raw)) throw new RubricateError('INPUT_INVALID', 'distribution must be an object of label: probability', { file, line, field });
  const distribution = new Map<string, number>();
  let total = 0;
  for (const [label, probability] of Object.entries(raw)) {
    if (typeof probability !== 'number' || !(probability >= 0 && probability <= 1)) throw new RubricateError('INPUT_INVALID', `the probability of "${label}" must be a number from 0 to 1`, { file, line, field: `distribution.${label}` });
    distribution.set(label, probability);
    total += probability;
  }
  if (Math.abs(total - 1) > 1e-3) throw new RubricateError('INPUT_INVALID', `the distribution sums to ${total}, not 1`, { file, line, field });
  return { kind: 'distribution', distribution };
}

/** Reads a file of recorded verdicts: every line names the same judge, and each (item, criterion) once. */
export async function readRecordedVerdicts(file: string): Promise<{ judge: string; verdicts: Map<string, RecordedVerdict> }> {
  const verdicts = new Map<string, RecordedVerdict>();
  let judge: string | undefined;
  for await (const { line, text, error } of readLines(file)) {
    if (error) throw error;
    const parsed = parseInputJson(text);
    if (!parsed.ok) throw new RubricateError('INPUT_INVALID', `not JSON: ${parsed.error}`, { file, line });
    const value = parsed.value;
    if (!isRecord(value)) throw new RubricateError('INPUT_INVALID', 'a recorded verdict is a JSON object', { file, line });
    if (typeof value.judge !== 'string' || value.judge === '') throw new RubricateError('INPUT_INVALID', 'judge must name the judge that recorded the verdict', { file, line, field: 'judge' });
    if (judge !== undefined && value.judge !== judge) throw new RubricateError('INPUT_INVALID', `every verdict must come from one judge (this one names "${value.judge}", earlier ones "${judge}")`, { file, line, field: 'judge' });
    judge = value.judge;
    for (const field of ['id', 'criterion_id'] as const) {
      if (typeof value[field] !== 'string' || value[field] === '') throw new RubricateError('INPUT_INVALID', `${field} must be a non-empty string`, { file, line, field });
    }
    const key = keyOf(value.id as string, value.criterion_id as string);
    if (verdicts.has(key)) throw new RubricateError('INPUT_INVALID', `item ${String(value.id)}, criterion ${String(value.criterion_id)} is recorded twice`, { file, line, field: 'criterion_id' });
    if (verdicts.size >= maxReplayedVerdicts) throw new RubricateError('INPUT_INVALID', `more than ${maxReplayedVerdicts} verdicts`, { file, line });
    verdicts.set(key, readVerdict(value, file, line));
  }
  if (judge === undefined) throw new RubricateError('INPUT_INVALID', 'no recorded verdicts', { file });
  return { judge, verdicts };
}

/** One criterion's reply entry and, where the verdict was a distribution, the probabilities of its value's token. */
interface Answer {
  field: 'criteria_met' | 'choice';
  value: string;
  alternatives: Array<{ token: string; probability: number }>;
}

function answerFor(verdict: RecordedVerdict, schema: Record<string, unknown>, subject: string): Answer {
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const choice = isRecord(properties.choice) ? properties.choice : undefined;
  const labels = choice && Array.isArray(choice.enum) ? choice.enum.map(String) : undefined;
  if (!labels) {
    if (verdict.kind === 'met') return { field: 'criteria_met', value: String(verdict.met), alternatives: [{ token: String(verdict.met), probability: 1 }] };
    if (verdict.kind === 'probability') {
      const { probability } = verdict;
      const alternatives = [{ token: 'true', probability }, { token: 'false', probability: 1 - probability }].filter((entry) => entry.probability > 0).sort((left, right) => right.probability - left.probability);
      return { field: 'criteria_met', value: alternatives[0].token, alternatives };
    }
    throw new RubricateError('JUDGE_UNSUPPORTED', `${subject} is a binary criterion, but the recorded verdict is a ${verdict.kind}`);
  }
  if (verdict.kind === 'choice') {
    if (!labels.includes(verdict.choice)) throw new RubricateError('JUDGE_UNSUPPORTED', `${subject}: the recorded choice "${verdict.choice}" is not on the criterion's scale (${labels.join(', ')})`);
    return { field: 'choice', value: verdict.choice, alternatives: [{ token: verdict.choice, probability: 1 }] };
  }
  if (verdict.kind === 'distribution') {
    const unknown = [...verdict.distribution.keys()].filter((label) => !labels.includes(label));
    if (unknown.length > 0) throw new RubricateError('JUDGE_UNSUPPORTED', `${subject}: the recorded distribution has labels not on the criterion's scale (${unknown.join(', ')})`);
    const alternatives = [...verdict.distribution].map(([token, probability]) => ({ token, probability })).filter((entry) => entry.probability > 0);
    // The most probable label, the first on the scale among equals.
    const best = alternatives.reduce((left, right) => (right.probability > left.probability || (right.probability === left.probability && labels.indexOf(right.token) < labels.indexOf(left.token)) ? right : left));
    return { field: 'choice', value: best.token, alternatives: [best, ...alternatives.filter((entry) => entry !== best)] };
  }
  throw new RubricateError('JUDGE_UNSUPPORTED', `${subject} is an ordinal criterion, but the recorded verdict is ${verdict.kind === 'met' ? 'met/unmet' : 'a probability of met'}`);
}

/** The reply text as tokens, the answers' values each one token carrying its alternatives. */
function replyTokens(entries: Array<{ criterion: string; answer: Answer; extra: Record<string, boolean> }>, batched: boolean): TokenProbability[] {
  const tokens: TokenProbability[] = [];
  const plain = (text: string) => tokens.push({ token: text, logprob: 0, top: [{ token: text, logprob: 0 }] });
  if (batched) plain('{"verdicts":{');
  entries.forEach(({ criterion, answer, extra }, index) => {
    const head = `${index > 0 ? ',' : ''}${batched ? `${JSON.stringify(criterion)}:` : ''}{"explanation":${JSON.stringify(replayedLabel)},${Object.entries(extra).map(([name, value]) => `"${name}":${value},`).join('')}"${answer.field}":${answer.field === 'choice' ? '"' : ''}`;
    plain(head);
    const top = answer.alternatives.map((entry) => ({ token: entry.token, logprob: Math.log(entry.probability) }));
    tokens.push({ token: answer.value, logprob: top[0].logprob, top });
    plain(`${answer.field === 'choice' ? '"' : ''}}`);
  });
  if (batched) plain('}}');
  return tokens;
}

export async function createReplayJudge(file: string): Promise<Judge> {
  if (file === '') throw new RubricateError('CONFIG_INVALID', 'judge spec "replay:" needs the file of recorded verdicts (replay:FILE)', { field: 'judge' });
  const { judge: recordedJudge, verdicts } = await readRecordedVerdicts(file);
  const sha256 = createHash('sha256').update(readFileSync(file)).digest('hex');
  const replayed = { file: basename(file), sha256, judge: recordedJudge };
  return {
    provenance: { id: `replay:${file}`, model: recordedJudge, replayed, settings: { replayed: true, recorded_judge: recordedJudge, verdicts: replayed.file, sha256 }, variant: `replay:${sha256}` },
    capabilities: { images: true, tokenProbabilities: true },
    async complete(request: JudgeRequest): Promise<JudgeReply> {
      const { subject, output } = request;
      if (!subject || !output) throw new RubricateError('JUDGE_UNSUPPORTED', 'the replay judge answers per-criterion and batched grading only (--mode per-criterion or batched), where each request names its item and criteria');
      const batched = output.name === 'criteria_verdicts';
      const schemaOf = (criterion: string): Record<string, unknown> => {
        if (!batched) return output.schema;
        const container = isRecord(output.schema.properties) && isRecord(output.schema.properties.verdicts) ? output.schema.properties.verdicts : {};
        const entry = isRecord(container.properties) ? container.properties[criterion] : undefined;
        return isRecord(entry) ? entry : {};
      };
      const entries = subject.criteria.map((criterion) => {
        const name = `item ${subject.item}, criterion ${criterion}`;
        const verdict = verdicts.get(keyOf(subject.item, criterion));
        if (!verdict) throw new RubricateError('JUDGE_NOT_RECORDED', `${basename(file)} has no verdict for ${name}`, { item: subject.item, criterion });
        const schema = schemaOf(criterion);
        const properties = isRecord(schema.properties) ? schema.properties : {};
        const extra: Record<string, boolean> = 'cannot_assess' in properties ? { cannot_assess: false } : {};
        return { criterion, answer: answerFor(verdict, schema, name), extra };
      });
      const tokens = replyTokens(entries, batched);
      return {
        text: tokens.map((token) => token.token).join(''),
        // No model was asked: nothing to count or bill.
        usage: { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 },
        finishReason: 'stop',
        ...(request.logprobs ? { tokenProbabilities: tokens } : {}),
      };
    },
  };
}
