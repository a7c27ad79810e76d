/**
 * The one rule that decides whether verdicts are made up: given by the scripted judge
 * (`scripted:…`, a judge that asks no model), by `rubricate fake-judge` (the same replies over
 * HTTP, so the provenance names whatever model the caller asked for, but every explanation says
 * it is scripted), or by any judge whose provenance is marked `synthetic`. Every surface that
 * shows verdicts (terminal summaries, metrics files, reports, the viewer, `export`, the reward
 * service) asks this function, so a made-up run is labelled the same way everywhere.
 *
 * It sits in the foundation layer so that every layer can import it; the scripted judge takes
 * its label from here.
 */
import { isRecord } from './is-record.js';

/** The text every made-up explanation carries (the scripted judge and `rubricate fake-judge` write it). */
export const scriptedLabel = 'scripted reply: no model was asked';

/** The prefix of the scripted judge's specs (`scripted:met`, `scripted:unmet`, `scripted:mixed`). */
const scriptedPrefix = 'scripted:';

/** What a made-up verdict is called where a person reads it (the first line of a summary, a banner, a label). */
export const madeUpWording = 'made up: these verdicts come from a scripted judge, not a model';

/** Judge specs a provenance names: the judge itself, each jury member, each cascade stage (`a+b` for juries). */
function judgeNames(judge: unknown): string[] {
  if (typeof judge === 'string') return judge.split('+');
  if (!isRecord(judge)) return [];
  const names = typeof judge.id === 'string' ? judge.id.split('+') : [];
  const jury = isRecord(judge.jury) && Array.isArray(judge.jury.members) ? judge.jury.members : [];
  for (const member of jury) if (isRecord(member) && typeof member.judge === 'string') names.push(member.judge);
  const cascade = isRecord(judge.cascade) && Array.isArray(judge.cascade.judges) ? judge.cascade.judges : [];
  for (const stage of cascade) if (typeof stage === 'string') names.push(stage);
  return names;
}

/** The scripted judge named by a provenance, if any (`scripted:mixed`; a provenance marked synthetic names its id). */
function scriptedJudgeOf(judge: unknown): string | undefined {
  const scripted = judgeNames(judge).find((name) => name === 'scripted' || name.startsWith(scriptedPrefix));
  if (scripted) return scripted;
  if (isRecord(judge) && (judge.model === 'scripted' || judge.synthetic === true)) return typeof judge.id === 'string' ? judge.id : 'scripted';
  return undefined;
}

function saysScripted(text: unknown): boolean {
  return typeof text === 'string' && text.includes(scriptedLabel);
}

/** Whether a verdict's explanations (one, or one per presentation order) carry the scripted label. */
function explainedAsScripted(verdict: unknown): boolean {
  if (!isRecord(verdict)) return false;
  if (saysScripted(verdict.explanation)) return true;
  return isRecord(verdict.explanations) && Object.values(verdict.explanations).some(saysScripted);
}

/**
 * Who made the verdicts up, or undefined when they are a model's (or nothing says otherwise).
 * `source` is a judge spec, a judge provenance (`{id, model, …}`), or anything that carries
 * verdicts: a results line, a compare line, a reward answer, a metrics summary (`judge`,
 * `criteria[].explanation`, `overall`, `scripted`). Fake-judge runs are found by their
 * explanations, since their provenance names the model the caller asked for.
 */
export function madeUpBy(source: unknown): string | undefined {
  if (typeof source === 'string') return scriptedJudgeOf(source);
  if (!isRecord(source)) return undefined;
  const direct = scriptedJudgeOf(source);
  if (direct && typeof source.id === 'string' && typeof source.model === 'string') return direct;
  const named = scriptedJudgeOf(source.judge);
  if (named) return named;
  if (typeof source.scripted_by === 'string' && source.scripted === true) return source.scripted_by;
  if (source.scripted === true) return 'scripted';
  const criteria = Array.isArray(source.criteria) ? source.criteria : [];
  if (explainedAsScripted(source) || explainedAsScripted(source.overall) || criteria.some(explainedAsScripted)) return 'rubricate fake-judge (scripted)';
  return undefined;
}

/** Whether verdicts are made up (see `madeUpBy`). */
export function isMadeUp(source: unknown): boolean {
  return madeUpBy(source) !== undefined;
}

/** The wording a person sees for made-up verdicts, naming who made them up. */
export function madeUpNotice(by: string): string {
  return `${madeUpWording} (${by})`;
}

/**
 * Made-up verdicts met over a stream (a run's results lines, a file read back): who made the
 * first ones up, and how many lines were. A summary's first line and a metrics file read it.
 */
export class MadeUpTally {
  by: string | undefined;
  lines = 0;

  add(source: unknown): void {
    const by = madeUpBy(source);
    if (by === undefined) return;
    this.by ??= by;
    this.lines += 1;
  }

  /** The fields a metrics file or summary carries when verdicts were made up (none otherwise). */
  fields(): { scripted: true; scripted_by: string } | Record<string, never> {
    return madeUpFields(this.by);
  }
}

/** The same fields for a run whose judge alone says it (`scripted:…`), or whose lines did. */
export function madeUpFields(by: string | undefined): { scripted: true; scripted_by: string } | Record<string, never> {
  return by === undefined ? {} : { scripted: true, scripted_by: by };
}
