/**
 * Which input format a file's records look like, from the keys of its first record, so a file
 * read with the wrong `--format` gets one diagnosis naming the format that fits ("this looks like
 * HealthBench: give --format healthbench") instead of an error on every record. Like the
 * wrong-type diagnosis (`util/file-kind.ts`), it is consulted only once a record has failed.
 */
import { readFile, stat } from 'node:fs/promises';
import { isCsvFileName } from '../util/csv.js';
import { isRecord } from '../util/is-record.js';
import { safeParseJson } from '../util/json.js';
import { readJsonObjects } from './shared.js';

/** What reads a format: `grade` (items), `compare` and `meta` (pairs), `score` (results). */
export type FormatKind = 'items' | 'pairs' | 'results';

interface Signature {
  format: string;
  kind: FormatKind;
  /** The format's name as people know it. */
  name: string;
  /** Key sets a record of the format has (any one of them, every key of it; `a.b` is a nested key). */
  keys: ReadonlyArray<readonly string[]>;
}

/** Every registered format's signature (`detect.test.ts` checks that none is missing). */
export const formatSignatures: readonly Signature[] = [
  { format: 'items', kind: 'items', name: 'rubricate items', keys: [['prompt', 'response', 'rubric'], ['prompt', 'rubric'], ['prompt', 'rubric_id']] },
  { format: 'healthbench', kind: 'items', name: 'HealthBench', keys: [['prompt_id', 'prompt', 'rubrics']] },
  { format: 'researchrubrics', kind: 'items', name: 'ResearchRubrics', keys: [['sample_id', 'prompt', 'rubrics']] },
  { format: 'rar', kind: 'items', name: 'RaR', keys: [['question', 'rubric']] },
  { format: 'rubrichub', kind: 'items', name: 'RubricHub', keys: [['prompt', 'reward_model']] },
  { format: 'drb2', kind: 'items', name: 'DeepResearch Bench II', keys: [['prompt', 'content.rubric']] },
  { format: 'advancedif', kind: 'items', name: 'AdvancedIF', keys: [['conversation_history', 'prompt_metadata']] },
  { format: 'biggen', kind: 'items', name: 'BiGGen-Bench', keys: [['input', 'score_rubric']] },
  { format: 'prbench', kind: 'items', name: 'PRBench', keys: [['task', 'prompt_0', 'rubric']] },
  { format: 'profbench', kind: 'items', name: 'ProfBench', keys: [['task_id', 'rubrics']] },
  { format: 'ifeval', kind: 'items', name: 'IFEval', keys: [['key', 'instruction_id_list', 'kwargs']] },
  { format: 'tau-bench', kind: 'items', name: 'τ-bench trajectories', keys: [['task_id', 'traj']] },
  { format: 'multichallenge', kind: 'items', name: 'MultiChallenge', keys: [['uuid', 'responses_create_params.input', 'rubric'], ['metadata.taskId', 'messages', 'rubric']] },
  { format: 'otel-genai', kind: 'items', name: 'OpenTelemetry GenAI spans', keys: [['resourceSpans'], ['traceId', 'spanId']] },
  { format: 'results', kind: 'results', name: 'rubricate results', keys: [['id', 'status', 'criteria']] },
  { format: 'simple-evals', kind: 'results', name: 'simple-evals HealthBench results', keys: [['htmls', 'convos', 'metadata']] },
  { format: 'pairs', kind: 'pairs', name: 'rubricate pairs', keys: [['prompt', 'response_a', 'response_b'], ['prompt', 'chosen', 'rejected']] },
  { format: 'llmbar', kind: 'pairs', name: 'LLMBar', keys: [['input', 'output_1', 'output_2']] },
  { format: 'pandalm', kind: 'pairs', name: 'PandaLM', keys: [['instruction', 'response1', 'response2']] },
  { format: 'autoj', kind: 'pairs', name: 'Auto-J', keys: [['prompt', 'response 1', 'response 2']] },
  { format: 'judgebench', kind: 'pairs', name: 'JudgeBench', keys: [['pair_id', 'response_A', 'response_B']] },
  { format: 'hhh', kind: 'pairs', name: 'HHH alignment (prometheus-eval)', keys: [['chosen_instruction', 'rejected_instruction']] },
];

function has(record: Record<string, unknown>, path: string): boolean {
  let value: unknown = record;
  for (const part of path.split('.')) {
    if (!isRecord(value) || !(part in value)) return false;
    value = value[part];
  }
  return true;
}

/** The formats whose records look like this one, each with the most keys one of its signatures matched, most first. */
export function formatsMatching(record: Record<string, unknown>): Array<{ signature: Signature; matched: number }> {
  return formatSignatures
    .map((signature) => ({ signature, matched: Math.max(0, ...signature.keys.filter((keys) => keys.every((key) => has(record, key))).map((keys) => keys.length)) }))
    .filter((entry) => entry.matched > 0)
    .sort((first, second) => second.matched - first.matched);
}

const wholeFileLimit = 64 * 1024 * 1024;

/** A file's first record: its first JSONL line or CSV row, the first entry of a JSON list or object of records. */
export async function firstRecord(file: string): Promise<Record<string, unknown> | undefined> {
  try {
    // A JSON document (a list or an object of records) is parsed whole, as its importer reads it.
    const whole = !isCsvFileName(file) && (await stat(file)).size <= wholeFileLimit ? safeParseJson((await readFile(file, 'utf8')).trim()) : undefined;
    if (whole?.ok) {
      const value = whole.value;
      if (Array.isArray(value)) return isRecord(value[0]) ? value[0] : undefined;
      if (!isRecord(value)) return undefined;
      // An object of records by id (BiGGen-Bench), or one record (a simple-evals results file, a one-line JSONL).
      const first = Object.values(value)[0];
      return formatsMatching(value).length === 0 && isRecord(first) ? first : value;
    }
    for await (const entry of readJsonObjects(file)) return 'value' in entry ? entry.value : undefined;
  } catch {
    // An unreadable file has its own error already.
  }
  return undefined;
}

const commandOf: Record<FormatKind, string> = { items: 'rubricate grade', pairs: 'rubricate compare', results: 'rubricate score' };

/**
 * When a file read as `format` looks like another format: what it looks like and how to read it
 * ("its records look like HealthBench (keys …): give --format healthbench"); undefined when it
 * looks like `format` or like nothing known.
 */
export async function otherFormatHint(file: string, format: string, kind: FormatKind): Promise<string | undefined> {
  const record = await firstRecord(file);
  if (!record) return undefined;
  const matching = formatsMatching(record);
  // The closest formats: those matching the most keys (a pair also has an item's prompt and rubric).
  const closest = matching.filter((entry) => entry.matched === matching[0]?.matched).map((entry) => entry.signature);
  if (closest.length === 0 || closest.some((signature) => signature.format === format)) return undefined;
  const best = closest.find((signature) => signature.kind === kind) ?? closest[0];
  const keys = Object.keys(record).slice(0, 8).join(', ');
  return `its records look like ${best.name} (keys ${keys}): ${best.kind === kind ? `give --format ${best.format}` : `it is read by \`${commandOf[best.kind]} --format ${best.format}\``}`;
}
