/**
 * The judge a results file was graded with, for the commands that read one and grade again
 * (`rejudge`, `align`): with no `--judge`, they reuse it and say so on stderr, rather than fall
 * back to whatever the environment names. A results file is untrusted input: only the model is
 * taken from it (never an endpoint a key would be sent to), and never one that would download.
 */
import { existsSync } from 'node:fs';
import type { ModelSpec, RunSpec } from '../spec/run-spec.js';
import { isRecord } from '../util/is-record.js';
import { parseLineJson, readLines } from '../util/jsonl.js';
import type { CommandContext } from './context.js';

/** Lines read looking for one that names its judge (invalid lines name none). */
const linesSearched = 1000;

/** The judge specs recorded in a results file (a jury's members), or undefined when no line names one. */
export async function recordedJudges(file: string): Promise<string[] | undefined> {
  let read = 0;
  for await (const { text } of readLines(file)) {
    if ((read += 1) > linesSearched) break;
    const parsed = parseLineJson(text);
    const judge = parsed.ok && isRecord(parsed.value) ? parsed.value.judge : undefined;
    if (!isRecord(judge) || typeof judge.id !== 'string') continue;
    const members = isRecord(judge.jury) && Array.isArray(judge.jury.members) ? judge.jury.members.map((member) => (isRecord(member) ? member.judge : undefined)) : undefined;
    const specs = members ?? [judge.id];
    return specs.every((spec): spec is string => typeof spec === 'string') ? [...new Set(specs)] : undefined;
  }
  return undefined;
}

/** Why a recorded judge spec is not reused as it stands, or undefined when it may be. */
function whyNotReused(spec: string, environment: NodeJS.ProcessEnv): string | undefined {
  const separator = spec.indexOf(':');
  const prefix = separator === -1 ? spec : spec.slice(0, separator);
  const target = spec.slice(separator + 1);
  if (['openai', 'azure', 'anthropic', 'gemini', 'scripted'].includes(prefix)) return undefined;
  if (prefix !== 'gguf') return `"${spec}" is not a judge rubricate builds by itself`;
  if (target === 'default') return environment.RUBRICATE_MODEL ? undefined : 'gguf:default would download the default model: give --judge gguf:default to choose it';
  if (/^(hf:|https?:\/\/)/i.test(target)) return `${spec} would be downloaded: give --judge ${spec} to choose it`;
  return existsSync(target) ? undefined : `no model file at ${target}`;
}

/**
 * The run spec with the results file's judge when none is given (no `--judge`, and no model in
 * the judge flags): said in one line on stderr. Unchanged when a judge is given, or the file
 * names none that may be reused (then the usual rule applies, and says what to do).
 */
export async function reuseRecordedJudge(spec: RunSpec, file: string, context: Pick<CommandContext, 'stderr'>, environment: NodeJS.ProcessEnv = process.env): Promise<RunSpec> {
  if (spec.judges.some((model) => model.model !== undefined)) return spec;
  const recorded = await recordedJudges(file).catch(() => undefined);
  if (!recorded) return spec;
  const refused = recorded.map((judge) => whyNotReused(judge, environment)).find((reason) => reason !== undefined);
  if (refused) {
    context.stderr(`judge: not reusing the one recorded in ${file} (${refused})`);
    return spec;
  }
  const settings: ModelSpec = spec.judges[0] ?? {};
  context.stderr(`judge: ${recorded.join(' + ')}, as recorded in ${file} (no --judge given; give one to grade with another)`);
  return { ...spec, judges: recorded.map((model) => ({ ...settings, model })) };
}
