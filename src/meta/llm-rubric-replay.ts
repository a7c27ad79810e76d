/**
 * LLM-Rubric's recorded judge as files the rest of rubricate reads: the real set's dialogues as
 * items (one ordinal criterion 1–4 per question Q0–Q8) and gpt-3.5-turbo-16k's recorded answer
 * distributions as a replay file (`--judge replay:FILE`), so `grade`, `meta` and `align` run on
 * the verdicts the paper's judge gave, with no model asked. The distributions are written as the
 * set reader returns them: renormalised where the four published probabilities sum below 1, as
 * upstream does (by at most 1.5e-6).
 *
 * Only the real set has dialogue texts in the data (`real_data.json`); a dialogue scored by the
 * judge but missing from it is an error, never an item with an invented response.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RubricateError } from '../errors.js';
import { JsonLinesWriter } from '../util/files.js';
import { isRecord } from '../util/is-record.js';
import { parseInputJson } from '../util/json.js';
import { readResults } from '../results/results.js';
import { joinedAnswers, llmRubricQuestions, readLlmRubricSet, scoreAgreement, type LlmRubricSet, type ScoreAgreement } from './llm-rubric.js';

/** The judge named in LLM-Rubric's file names; every replayed verdict carries it. */
export const llmRubricJudge = 'gpt-3.5-turbo-16k';
/** Bound on the size of the dialogue file read whole (the published one is 3.2 MB). */
export const maxDialogueFileBytes = 256 * 1024 * 1024;

const questionText: Record<string, string> = {
  Q0: 'LLM-Rubric Q0: overall, how satisfied would the user be with this dialogue? (1–4)',
};

function criterionText(question: string): string {
  return questionText[question] ?? `LLM-Rubric ${question}: the paper's rubric question ${question} on this dialogue (1–4; its wording is in the paper's appendix, not in the data)`;
}

interface Dialogue {
  topic: string;
  /** The turns as `role: content`, blank-line separated. */
  transcript: string;
}

/** The real set's dialogues by text id, from `real_data.json` in either layout. */
function readDialogues(directory: string): { file: string; dialogues: Map<string, Dialogue> } {
  const candidates = ['real_data__real_data.json', join('data', 'real_data', 'real_data.json'), join('real_data', 'real_data.json')];
  const file = candidates.map((candidate) => join(directory, candidate)).find((path) => existsSync(path));
  if (!file) throw new RubricateError('INPUT_UNREADABLE', `no dialogue texts in the LLM-Rubric folder (looked for ${candidates.join(', ')})`, { file: directory, field: 'input' });
  const text = readFileSync(file, 'utf8');
  if (text.length > maxDialogueFileBytes) throw new RubricateError('INPUT_INVALID', `the dialogue file is over ${maxDialogueFileBytes} bytes`, { file });
  const parsed = parseInputJson(text);
  if (!parsed.ok || !Array.isArray(parsed.value)) throw new RubricateError('INPUT_INVALID', `not a JSON array of dialogues${parsed.ok ? '' : `: ${parsed.error}`}`, { file });
  const dialogues = new Map<string, Dialogue>();
  parsed.value.forEach((entry: unknown, index) => {
    const field = `[${index}]`;
    if (!isRecord(entry) || typeof entry._id !== 'string' || !Array.isArray(entry.messages)) {
      throw new RubricateError('INPUT_INVALID', 'a dialogue needs a string _id and a list of messages', { file, field });
    }
    const turns = entry.messages.map((message: unknown, turn) => {
      if (!isRecord(message) || typeof message.role !== 'string' || typeof message.content !== 'string') throw new RubricateError('INPUT_INVALID', 'a message needs a string role and content', { file, field: `${field}.messages[${turn}]` });
      return `${message.role}: ${message.content}`;
    });
    dialogues.set(entry._id, { topic: typeof entry.topic === 'string' ? entry.topic : '', transcript: turns.join('\n\n') });
  });
  return { file, dialogues };
}

export interface LlmRubricReplaySummary {
  judge: string;
  items: number;
  verdicts: number;
  files: { evaluations: string; dialogues: string };
}

async function writeAll(path: string, lines: readonly unknown[]): Promise<void> {
  const writer = new JsonLinesWriter(path);
  try {
    for (const line of lines) await writer.write(line);
  } catch (error) {
    await writer.discard();
    throw error;
  }
  await writer.close();
}

function itemsAndVerdicts(set: LlmRubricSet, dialogues: Map<string, Dialogue>, dialogueFile: string): { items: unknown[]; verdicts: unknown[] } {
  const items: unknown[] = [];
  const verdicts: unknown[] = [];
  const scale = { type: 'ordinal', choices: ['1', '2', '3', '4'].map((label) => ({ label })) };
  for (const [textId, byQuestion] of [...set.distributions].sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0))) {
    const dialogue = dialogues.get(textId);
    if (!dialogue) throw new RubricateError('INPUT_INVALID', `dialogue ${textId} has recorded answers but no text`, { file: dialogueFile, field: '_id' });
    const questions = llmRubricQuestions.filter((question) => byQuestion.has(question));
    items.push({
      id: textId,
      prompt: dialogue.topic === '' ? `LLM-Rubric dialogue ${textId}` : dialogue.topic,
      // The whole dialogue is what the judge rated: its turns as one transcript.
      response: dialogue.transcript,
      rubric: { criteria: questions.map((question) => ({ id: question, text: criterionText(question), points: 1, scale })) },
      tags: [`llm-rubric:${set.name}`],
    });
    for (const question of questions) {
      const distribution = byQuestion.get(question)!;
      verdicts.push({ judge: llmRubricJudge, id: textId, criterion_id: question, distribution: Object.fromEntries(distribution.map((probability, index) => [String(index + 1), probability])) });
    }
  }
  return { items, verdicts };
}

/** Writes the real set as items and the judge's recorded distributions as a replay file. */
export async function writeLlmRubricReplay(directory: string, out: { items: string; replay: string }): Promise<LlmRubricReplaySummary> {
  const set = await readLlmRubricSet(directory, 'real');
  const { file, dialogues } = readDialogues(directory);
  const { items, verdicts } = itemsAndVerdicts(set, dialogues, file);
  await writeAll(out.replay, verdicts);
  await writeAll(out.items, items);
  return { judge: llmRubricJudge, items: items.length, verdicts: verdicts.length, files: { evaluations: set.files.evaluations, dialogues: file } };
}

/** The judge's answers as a graded results file holds them: per dialogue, per question. */
interface GradedAnswer {
  label: number;
  expectedScore: number | null;
}

/** Who graded the results, as their lines say (`replayed` when the verdicts came from a replay file). */
export interface GradedJudge {
  id: string;
  model: string;
  replayed: boolean;
}

/** The README's argmax and expected rows rebuilt from graded results (e.g. replayed verdicts). */
export interface LlmRubricGradedRows {
  results: string;
  judge: GradedJudge;
  /** Per question: the graded label (the most probable answer) and, with --verdict expected-score, the expected score, against the humans. */
  questions: Record<string, { argmax: ScoreAgreement; expectedScore: ScoreAgreement | null }>;
}

async function readGradedAnswers(file: string): Promise<{ judge: GradedJudge; answers: Map<string, GradedAnswer> }> {
  const answers = new Map<string, GradedAnswer>();
  let judge: GradedJudge | undefined;
  for await (const entry of readResults(file)) {
    if (entry.kind === 'invalid') throw entry.error;
    const { record, line } = entry;
    if (record.status !== 'ok') throw new RubricateError('INPUT_INVALID', `item ${record.id} was not graded (status ${record.status}): the rows would leave it out silently`, { file, line, field: 'status' });
    const info = record.judge;
    if (!info) throw new RubricateError('INPUT_INVALID', 'the line names no judge', { file, line, field: 'judge' });
    const current = { id: info.id, model: info.model, replayed: info.settings?.replayed === true };
    if (judge && (judge.id !== current.id || judge.model !== current.model)) throw new RubricateError('INPUT_INVALID', `every line must come from one judge (this one names ${current.id}, earlier ones ${judge.id})`, { file, line, field: 'judge' });
    judge = current;
    for (const criterion of record.criteria) {
      const label = Number(criterion.label);
      if (criterion.status !== 'ok' || !(Number.isInteger(label) && label >= 1 && label <= 4)) {
        throw new RubricateError('INPUT_INVALID', `item ${record.id}, criterion ${criterion.id}: no answer 1–4 (status ${criterion.status}, label ${String(criterion.label)})`, { file, line, field: 'criteria' });
      }
      answers.set(`${record.id} ${criterion.id}`, { label, expectedScore: criterion.expected_score ?? null });
    }
  }
  if (!judge) throw new RubricateError('INPUT_INVALID', 'no graded results', { file });
  return { judge, answers };
}

/** The argmax and expected rows from graded results, on the same (dialogue, annotator) rows as the README's table. */
export async function llmRubricGradedRows(directory: string, results: string, confidence = 0.95): Promise<LlmRubricGradedRows> {
  const set = await readLlmRubricSet(directory, 'real');
  const { judge, answers } = await readGradedAnswers(results);
  const questions: LlmRubricGradedRows['questions'] = {};
  for (const question of llmRubricQuestions) {
    const joined = joinedAnswers(set, question);
    const graded = joined.map((entry) => {
      const answer = answers.get(`${entry.textId} ${question}`);
      if (!answer) throw new RubricateError('INPUT_INVALID', `no graded answer for dialogue ${entry.textId}, ${question}`, { file: results, field: 'criteria' });
      return answer;
    });
    const human = joined.map((entry) => entry.human);
    const expected = graded.every((answer) => answer.expectedScore !== null) ? graded.map((answer) => answer.expectedScore!) : null;
    questions[question] = {
      argmax: scoreAgreement(human, graded.map((answer) => answer.label), confidence),
      expectedScore: expected ? scoreAgreement(human, expected, confidence) : null,
    };
  }
  return { results, judge, questions };
}

/** The rows from graded results, as `meta` prints them under the recorded table. */
export function formatGradedRows(rows: LlmRubricGradedRows): string {
  const show = (value: number | null) => (value === null ? 'n/a' : value.toFixed(6));
  const source = rows.judge.replayed ? `replayed verdicts of ${rows.judge.model} (${rows.judge.id})` : `verdicts of ${rows.judge.model} (${rows.judge.id})`;
  const lines = [`From ${rows.results}: ${source}`, 'question system            rmse    pearson   spearman    kendall     N'];
  for (const [question, row] of Object.entries(rows.questions)) {
    for (const [system, agreement] of [['argmax', row.argmax], ['expected_score', row.expectedScore]] as const) {
      if (!agreement) continue;
      const cells = [agreement.rmse, agreement.pearson.value, agreement.spearman.value, agreement.kendall.value].map((value) => show(value).padStart(10));
      lines.push(`${question.padEnd(8)} ${system.padEnd(14)} ${cells.join(' ')} ${String(agreement.n).padStart(5)}`);
    }
  }
  return lines.join('\n');
}
