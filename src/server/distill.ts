/**
 * Rubric distillation over HTTP (`POST /v1/rubrics/distill`): the pipeline of `generate --distill`
 * (`src/generation/distill.ts`) on labelled pairs sent in the body, with the server's judge as the
 * grader and its `--generator` as the writer. The answer holds what the CLI writes: the distilled
 * rubric (every criterion with its provenance) and the report (`--summary`).
 *
 * Bounded before any call: the body (`--max-body-bytes`), the pairs and rubrics it may hold, and the
 * limits a request may ask, none above the CLI's defaults. The run takes one place of the admission
 * queue and answers by the deadline. A failed call is an error answer with its code; no rubric is
 * `RUBRIC_NOT_DISTILLED`, never an empty rubric called done.
 */
import type { Context } from 'hono';
import { z } from 'zod';
import { RubricateError } from '../errors.js';
import type { PreferencePair } from '../generation/contrastive.js';
import { defaultDistillLimits, distillRubric, type DistillLimits, type DistillReport } from '../generation/distill.js';
import type { RubricGenerator } from '../generation/generator.js';
import { dropLintErrors } from '../lint/repair.js';
import { normalizeMessages, normalizeRubric } from '../rubric/normalize.js';
import type { Message, Rubric } from '../rubric/schema.js';
import { zodIssueError } from '../util/zod-issue.js';
import { readJsonBody } from './body.js';
import type { RouteContext, ServerApp } from './context.js';

export const distillRoutes = ['/v1/rubrics/distill'];

/** Labelled pairs (and given rubrics) one request may send: distillation grades at most `limits.pairs` of them. */
export const maxDistillRequestPairs = 1000;
/** Proposals a request may ask of the generator (`--distill-samples`). */
const maxDistillSamples = 4;

export interface DistillRouteOptions {
  generator: RubricGenerator;
  /** Who made the verdicts up (the scripted judge or generator), when they are: said in every answer. */
  madeUpBy?: string;
}

const promptSchema = z.union([z.string().min(1), z.array(z.looseObject({ role: z.string().min(1), content: z.string() })).min(1)]);

/** One line of the `--format pairs` file `generate --distill` reads. */
const pairSchema = z.looseObject({ id: z.string().min(1).optional(), prompt: promptSchema, response_a: z.string(), response_b: z.string(), label: z.enum(['A', 'B']) });

const limitsSchema = z.strictObject({
  prompts: z.int().min(1),
  pairs: z.int().min(1),
  candidates: z.int().min(1),
  size: z.int().min(1),
  harden_pairs: z.int().min(0),
});

const bodySchema = z.looseObject({
  pairs: z.array(pairSchema).min(1),
  rubrics: z.array(z.looseObject({ prompt: promptSchema, rubric: z.unknown() })).optional(),
  limits: limitsSchema.partial().optional(),
  samples: z.int().min(1).optional(),
});

type DistillBody = z.infer<typeof bodySchema>;

/** The body's limit names are the CLI's flags without `--distill-`. */
const limitFields: ReadonlyArray<[keyof NonNullable<DistillBody['limits']>, keyof DistillLimits]> = [
  ['prompts', 'prompts'],
  ['pairs', 'pairs'],
  ['candidates', 'candidates'],
  ['size', 'selected'],
  ['harden_pairs', 'hardenPairs'],
];

function overLimit(field: string, value: number, maximum: number, why: string): RubricateError {
  return new RubricateError('LIMIT_EXCEEDED', `${field}: ${value} is over the bound of ${maximum} (${why}): nothing was distilled`, { field, maximum });
}

/** Counted before the pairs are parsed, so a huge list costs no validation. */
function refuseOversizedLists(raw: unknown): void {
  if (typeof raw !== 'object' || raw === null) throw new RubricateError('INPUT_INVALID', 'expected a JSON object {pairs: [...]}', { field: 'body' });
  for (const field of ['pairs', 'rubrics'] as const) {
    const list = (raw as Record<string, unknown>)[field];
    if (Array.isArray(list) && list.length > maxDistillRequestPairs) throw overLimit(field, list.length, maxDistillRequestPairs, 'entries per distillation request');
  }
}

function limitsOf(body: DistillBody): DistillLimits {
  const limits: DistillLimits = { ...defaultDistillLimits };
  for (const [field, key] of limitFields) {
    const asked = body.limits?.[field];
    if (asked === undefined) continue;
    if (asked > defaultDistillLimits[key]) throw overLimit(`limits.${field}`, asked, defaultDistillLimits[key], `the most --distill-${field.replace('_', '-')} a request may ask`);
    limits[key] = asked;
  }
  return limits;
}

function pairsOf(body: DistillBody): PreferencePair[] {
  return body.pairs.map((pair, index) => {
    const prompt = normalizeMessages(pair.prompt, { fieldPrefix: `pairs[${index}].prompt` });
    const chosenIsA = pair.label === 'A';
    return { id: pair.id ?? `pair-${index + 1}`, prompt, chosen: chosenIsA ? pair.response_a : pair.response_b, rejected: chosenIsA ? pair.response_b : pair.response_a, line: index + 1 };
  });
}

function rubricsOf(body: DistillBody): Array<{ prompt: Message[]; rubric: Rubric }> {
  return (body.rubrics ?? []).map((entry, index) => ({
    prompt: normalizeMessages(entry.prompt, { fieldPrefix: `rubrics[${index}].prompt` }),
    rubric: normalizeRubric(entry.rubric, { fieldPrefix: `rubrics[${index}].rubric` }),
  }));
}

async function readDistillRequest(context: Context, maxBodyBytes: number) {
  const raw = await readJsonBody(context, maxBodyBytes);
  refuseOversizedLists(raw);
  const checked = bodySchema.safeParse(raw);
  if (!checked.success) throw zodIssueError(checked.error, { prefix: 'expected {pairs: [{prompt, response_a, response_b, label: "A"|"B"}], rubrics?, limits?, samples?}: ', indexed: true });
  const body = checked.data;
  const limits = limitsOf(body);
  if (body.samples !== undefined && body.samples > maxDistillSamples) throw overLimit('samples', body.samples, maxDistillSamples, 'proposals per distillation request');
  return { input: { pairs: pairsOf(body), rubrics: rubricsOf(body) }, limits, samples: body.samples ?? 1 };
}

/** A failed distillation's error with the first things that went wrong on the way (the CLI prints them as warnings). */
function withWarnings(error: unknown, warnings: readonly string[]): unknown {
  if (!RubricateError.isInstance(error) || warnings.length === 0) return error;
  const more = warnings.length > 3 ? ` (and ${warnings.length - 3} more)` : '';
  return new RubricateError(error.code, `${error.message}: ${warnings.slice(0, 3).join('; ')}${more}`, error.details);
}

/** No rubric: why, with the verdicts that failed on the way (a failing judge shows here, never as a tie). */
function notDistilled(report: DistillReport, warnings: readonly string[]): RubricateError {
  const failed = report.candidates.reduce((sum, candidate) => sum + (typeof candidate.errors === 'number' ? candidate.errors : 0), 0);
  const why = report.warnings.at(-1) ?? warnings.at(-1) ?? 'no candidate survived';
  return new RubricateError('RUBRIC_NOT_DISTILLED', `no rubric was distilled: ${why}${failed > 0 ? `; ${failed} verdicts on the labelled pairs failed (the judge's errors), none counted as a tie` : ''}`);
}

export function registerDistillRoute(app: ServerApp, { service, maxBodyBytes }: RouteContext, options: DistillRouteOptions): void {
  app.post('/v1/rubrics/distill', async (context) => {
    service.assertRoom();
    const request = await readDistillRequest(context, maxBodyBytes);
    context.set('items', request.input.pairs.length);
    const warnings: string[] = [];
    const { rubric, report } = await service.runAdmitted(1, () =>
      distillRubric(request.input, {
        generators: [options.generator],
        grader: service.grader,
        limits: request.limits,
        samples: request.samples,
        repair: (candidate) => dropLintErrors(candidate, { generic: true }),
        onNotice: (message) => warnings.push(message),
      }).catch((error: unknown) => {
        throw withWarnings(error, warnings);
      }),
    );
    const scripted = options.madeUpBy ? { scripted: true as const, scripted_by: options.madeUpBy } : {};
    if (!rubric) throw notDistilled(report, warnings);
    return context.json({ rubric, summary: report, warnings, ...scripted });
  });
}
