/**
 * Query-agnostic rubric distillation (`generate --distill`), after Auto-Rubric's Propose–Evaluate–
 * Revise and selection, with RubricHub's multi-generator merge and difficulty evolution:
 *
 * 1. examples: each prompt's rubric (given, or written by the generator from its first pair);
 * 2. propose: every generator writes general criteria from those rubrics; the lists are merged
 *    (`merge.ts`: conservative dedup, higher points kept, points clamped);
 * 3. evaluate: each candidate is graded on both responses of every labelled pair;
 * 4. revise: candidates that favour the rejected response as often as the preferred one, or tell
 *    no pair apart, are rewritten once and evaluated again;
 * 5. harden: on pairs whose two strong responses both pass every aligned criterion, the generator
 *    proposes stricter criteria that separate them (evaluated like the rest);
 * 6. select: the compact set by greedy coding-rate gain over the verdict vectors (MCR²);
 * 7. lint: the caller's repair drops what fails, each drop reported with its rule.
 *
 * Everything is capped before the first call (prompts, pairs, candidates, harden pairs), and every
 * criterion written carries where it came from (`metadata.distill`, `metadata.merge`).
 */
import { addUsage, emptyUsage, type Usage } from '../engine/usage.js';
import { RubricateError, toRubricateError } from '../errors.js';
import type { Grader } from '../pipeline/grader.js';
import type { CriterionInput, Message, Rubric } from '../rubric/schema.js';
import { canonicalJson } from '../util/json.js';
import { rubricateVersion } from '../version.js';
import { groupPairs, type PreferencePair } from './contrastive.js';
import { comparableText } from './criteria.js';
import { isFatal } from './decompose-filter.js';
import { distillHardenMessages, distillProposeMessages, distillReviseMessages, type PromptRubricExample } from './distill-prompts.js';
import { evaluateCandidates, isAligned, pairOrdering, rubricOfCandidates, saturatedPairs, selectCompactSet, type Candidate, type PairOrdering } from './distill-evaluate.js';
import type { RubricGenerator } from './generator.js';
import { mergeCriteria } from './merge.js';
import { promptVersions } from './prompts.js';

export interface DistillLimits {
  /** Prompts whose rubrics the proposal reads. */
  prompts: number;
  /** Labelled pairs each candidate is graded on. */
  pairs: number;
  /** Criteria each generator may propose. */
  candidates: number;
  /** Criteria in the distilled rubric at most. */
  selected: number;
  /** Saturated pairs the hardening step uses (0: no hardening). */
  hardenPairs: number;
}

export const defaultDistillLimits: DistillLimits = { prompts: 20, pairs: 40, candidates: 16, selected: 8, hardenPairs: 2 };

/** Stricter criteria asked per saturated pair. */
const hardenPerPair = 3;

/** What lint made of the distilled rubric (injected by the caller: lint itself reads generation's measures). */
export interface RubricRepair {
  rubric: Rubric | undefined;
  dropped: ReadonlyArray<{ rule: string; criterion_id: string | null; message: string }>;
  unresolved: ReadonlyArray<{ rule: string; message: string }>;
  warnings: ReadonlyArray<{ rule: string; criterion_id: string | null; message: string }>;
}

export interface DistillOptions {
  /** One or more generators: each proposes, and their lists are merged. The first also writes missing prompt rubrics, revisions and hardening. */
  generators: readonly RubricGenerator[];
  grader: Grader;
  limits?: Partial<DistillLimits>;
  /** Proposals asked of each generator (samples; default 1): all of them merged. */
  samples?: number;
  /** Coding-rate distortion ε (default 0.5). */
  epsilon?: number;
  /** Points range of merged criteria (default: the first generator's Pitfall points to its Essential points). */
  range?: { min: number; max: number };
  repair?: (rubric: Rubric) => RubricRepair;
  /** Called for each thing a person should read (a failed call skipped, a lint drop). */
  onNotice?: (message: string) => void;
}

export interface DistillInput {
  pairs: readonly PreferencePair[];
  /** Rubrics already written for some prompts (matched on the prompt's messages). */
  rubrics?: ReadonlyArray<{ prompt: readonly Message[]; rubric: Rubric }>;
}

export interface DistillReport {
  rubricate_version: string;
  method: 'distill';
  prompt_versions: { propose: string; revise: string; harden: string; contrastive: string };
  generators: string[];
  input: { pairs: number; prompts: number; prompts_used: number; pairs_used: number; rubrics_given: number; rubrics_generated: number; rubrics_failed: number };
  limits: DistillLimits;
  merge: { proposals: number; proposed: number; duplicates: number; clamped: number };
  hardening: { saturated_pairs: number; pairs_used: number; proposed: number };
  selection: { vectors: string; epsilon: number; rate: number | null; selected: number };
  /** In-sample: the evaluation pairs also chose the criteria. */
  ordering: { distilled: PairOrdering | null; all_aligned: PairOrdering | null };
  candidates: Array<Record<string, unknown>>;
  lint: { dropped: Array<{ criterion_id: string | null; rule: string; message: string }>; warnings: Array<{ criterion_id: string | null; rule: string; message: string }> };
  warnings: string[];
  usage: { generator: Usage; judge: Usage };
}

export interface DistillResult {
  /** Undefined when no candidate survived (the report says why). */
  rubric: Rubric | undefined;
  report: DistillReport;
}

interface DistillState {
  options: DistillOptions;
  limits: DistillLimits;
  epsilon: number;
  evaluationPairs: PreferencePair[];
  groups: Array<{ first: PreferencePair; given?: Rubric }>;
  candidates: Candidate[];
  nextId: number;
  judgeUsage: Usage;
  /** Points of merged criteria: at most range.max, at least range.min. */
  range: { min: number; max: number };
  report: DistillReport;
}

export async function distillRubric(input: DistillInput, options: DistillOptions): Promise<DistillResult> {
  const state = prepareDistill(input, options);
  const examples = await collectExamples(state);
  await proposeCandidates(state, examples);
  await evaluateCandidates(options.grader, state.candidates, state.evaluationPairs, state.judgeUsage);
  await reviseMisaligned(state);
  await hardenSaturated(state);
  return finishDistill(state);
}

function prepareDistill(input: DistillInput, options: DistillOptions): DistillState {
  if (options.generators.length === 0) throw new RubricateError('CONFIG_INVALID', 'distillation needs at least one generator', { field: 'generator' });
  const limits = { ...defaultDistillLimits, ...options.limits };
  const allGroups = groupPairs(input.pairs, 'per-prompt');
  if (allGroups.length === 0) throw new RubricateError('INPUT_INVALID', 'distillation needs labelled preference pairs (none usable)', { field: 'input' });
  // Caps first: nothing below grows with the input beyond them.
  const groups = allGroups.slice(0, limits.prompts);
  const given = new Map((input.rubrics ?? []).map((entry) => [canonicalJson(entry.prompt), entry.rubric]));
  const evaluationPairs = spreadPairs(groups.map((group) => [group.generation, ...group.heldOut]), limits.pairs);
  const points = options.generators[0].importancePoints;
  const report: DistillReport = {
    rubricate_version: rubricateVersion,
    method: 'distill',
    prompt_versions: { propose: promptVersions.distillPropose, revise: promptVersions.distillRevise, harden: promptVersions.distillHarden, contrastive: promptVersions.contrastive },
    generators: options.generators.map((generator) => generator.provenance.id),
    input: { pairs: input.pairs.length, prompts: allGroups.length, prompts_used: groups.length, pairs_used: evaluationPairs.length, rubrics_given: 0, rubrics_generated: 0, rubrics_failed: 0 },
    limits,
    merge: { proposals: 0, proposed: 0, duplicates: 0, clamped: 0 },
    hardening: { saturated_pairs: 0, pairs_used: 0, proposed: 0 },
    selection: { vectors: 'verdict differences on the evaluation pairs (+1 favours the preferred response, -1 the other, 0 neither)', epsilon: options.epsilon ?? 0.5, rate: null, selected: 0 },
    ordering: { distilled: null, all_aligned: null },
    candidates: [],
    lint: { dropped: [], warnings: [] },
    warnings: [],
    usage: { generator: emptyUsage(), judge: emptyUsage() },
  };
  return {
    options,
    limits,
    epsilon: options.epsilon ?? 0.5,
    evaluationPairs,
    groups: groups.map((group) => ({ first: group.generation, given: given.get(canonicalJson(group.generation.prompt)) })),
    candidates: [],
    nextId: 1,
    judgeUsage: emptyUsage(),
    range: options.range ?? { min: points.Pitfall, max: Math.max(points.Essential, points.Important, points.Optional) },
    report,
  };
}

/** Up to `limit` pairs taken round-robin over the prompts, so every prompt is represented before any has two. */
function spreadPairs(perPrompt: readonly PreferencePair[][], limit: number): PreferencePair[] {
  const chosen: PreferencePair[] = [];
  for (let round = 0; chosen.length < limit; round += 1) {
    const layer = perPrompt.filter((pairs) => pairs.length > round).map((pairs) => pairs[round]);
    if (layer.length === 0) break;
    chosen.push(...layer.slice(0, limit - chosen.length));
  }
  return chosen;
}

function notice(state: DistillState, message: string): void {
  state.report.warnings.push(message);
  state.options.onNotice?.(message);
}

/** A failed generator call is reported and skipped; a fatal one (credentials, cancellation) stops the run. */
function reportFailure(state: DistillState, what: string, error: unknown): void {
  if (isFatal(error)) throw error;
  const failure = toRubricateError(error);
  notice(state, `${what} failed: [${failure.code}] ${failure.message}`);
}

/** Each used prompt's rubric criteria: given, or written by the first generator from the prompt's first pair. */
async function collectExamples(state: DistillState): Promise<PromptRubricExample[]> {
  const generator = state.options.generators[0];
  const examples = await Promise.all(
    state.groups.map(async (group): Promise<PromptRubricExample | undefined> => {
      if (group.given) {
        state.report.input.rubrics_given += 1;
        return { prompt: group.first.prompt, criteria: group.given.criteria.map((criterion) => criterion.text) };
      }
      try {
        const pair = group.first;
        const generated = await generator.contrast({ prompt: pair.prompt, chosen: pair.chosen, rejected: pair.rejected, reference: pair.reference }, { extra: { pair_id: pair.id } });
        state.report.input.rubrics_generated += 1;
        return { prompt: pair.prompt, criteria: generated.rubric.criteria.map((criterion) => criterion.text) };
      } catch (error) {
        state.report.input.rubrics_failed += 1;
        reportFailure(state, `rubric for pair ${group.first.id}`, error);
        return undefined;
      }
    }),
  );
  const present = examples.filter((example): example is PromptRubricExample => example !== undefined);
  if (present.length === 0) throw new RubricateError('JUDGE_UNPARSEABLE', 'distillation: no prompt rubric to distill from (every generation failed; see the warnings)');
  return present;
}

/** Every generator proposes general criteria (`samples` times each); the lists are merged into the first candidates. */
async function proposeCandidates(state: DistillState, examples: PromptRubricExample[]): Promise<void> {
  const samples = Math.max(1, state.options.samples ?? 1);
  const askers = state.options.generators.flatMap((generator) => Array.from({ length: samples }, (_, sample) => ({ generator, sample })));
  const sources = await Promise.all(
    askers.map(async ({ generator, sample }) => {
      const source = sourceName(generator, sample);
      try {
        const messages = distillProposeMessages({ examples, maxNew: state.limits.candidates }, generator.promptContext);
        const bounds = { minItems: Math.min(generator.minCriteria, state.limits.candidates), maxItems: state.limits.candidates };
        const proposed = await generator.askCriteria(promptVersions.distillPropose, messages, bounds, { sample });
        for (const warning of proposed.warnings) notice(state, `${source}: ${warning}`);
        return { source, criteria: proposed.criteria };
      } catch (error) {
        reportFailure(state, `proposal of ${source}`, error);
        return { source, criteria: [] };
      }
    }),
  );
  const merged = mergeCriteria(sources, { range: state.range });
  state.report.merge = { proposals: sources.length, proposed: sources.reduce((total, source) => total + source.criteria.length, 0), duplicates: merged.duplicates, clamped: merged.clamped };
  if (merged.criteria.length === 0) throw new RubricateError('JUDGE_UNPARSEABLE', 'distillation: no generator proposed a criterion (see the warnings)');
  for (const criterion of merged.criteria) {
    const mergeRecord = criterion.metadata?.merge as { sources: string[] } | undefined;
    addCandidate(state, criterion, 'propose', mergeRecord?.sources ?? []);
  }
}

/** A proposal's source as provenance names it: the generator's id and the sample (from 1). */
function sourceName(generator: RubricGenerator, sample: number): string {
  return `${generator.provenance.id}#${sample + 1}`;
}

function addCandidate(state: DistillState, criterion: CriterionInput, origin: Candidate['origin'], sources: string[], extra: Partial<Candidate> = {}): Candidate {
  const { id: _id, ...rest } = criterion;
  const candidate: Candidate = { id: `d${state.nextId}`, criterion: rest, origin, sources, ...extra };
  state.nextId += 1;
  state.candidates.push(candidate);
  return candidate;
}

/** One revision call for the candidates that are not aligned; the revisions are evaluated, the originals marked. */
async function reviseMisaligned(state: DistillState): Promise<void> {
  const failing = state.candidates.filter((candidate) => !isAligned(candidate));
  if (failing.length === 0) return;
  for (const candidate of failing) candidate.status = candidate.evaluation!.agree + candidate.evaluation!.disagree === 0 ? 'undecided' : 'misaligned';
  const generator = state.options.generators[0];
  const views = failing.map((candidate) => {
    const evaluation = candidate.evaluation!;
    const wrong = evaluation.vector.findIndex((value) => value < 0);
    const pair = wrong >= 0 ? state.evaluationPairs[wrong] : undefined;
    return {
      text: candidate.criterion.text,
      importance: importanceName(candidate, generator),
      agree: evaluation.agree,
      disagree: evaluation.disagree,
      ties: evaluation.ties,
      ...(pair ? { wrongExample: { prompt: pair.prompt, preferred: pair.chosen, rejected: pair.rejected } } : {}),
    };
  });
  let revised: CriterionInput[];
  try {
    const answer = await generator.askCriteria(promptVersions.distillRevise, distillReviseMessages({ candidates: views }, generator.promptContext), { minItems: 0, maxItems: failing.length });
    revised = answer.criteria;
  } catch (error) {
    reportFailure(state, 'revision', error);
    return;
  }
  // Revisions come one per original, in order; when the generator returned another number, each names every original it may stand for.
  for (const original of failing) original.status = 'revised';
  const matched = revised.length === failing.length;
  const added = revised.map((criterion, index) => addCandidate(state, criterion, 'revise', [sourceName(generator, 0)], { revisedFrom: matched ? failing[index].id : failing.map((original) => original.id) }));
  await evaluateCandidates(state.options.grader, added, state.evaluationPairs, state.judgeUsage);
  for (const candidate of added) if (!isAligned(candidate)) candidate.status = candidate.evaluation!.agree + candidate.evaluation!.disagree === 0 ? 'undecided' : 'misaligned';
}

function importanceName(candidate: Candidate, generator: RubricGenerator): string {
  const tag = candidate.criterion.tags?.find((name) => name.startsWith('importance:'));
  if (tag) return tag.slice('importance:'.length);
  return (candidate.criterion.points ?? 1) < 0 ? 'pitfall' : Object.entries(generator.importancePoints).find(([, points]) => points === candidate.criterion.points)?.[0] ?? 'important';
}

/** Difficulty evolution: stricter criteria from pairs of strong responses that every aligned criterion passes. */
async function hardenSaturated(state: DistillState): Promise<void> {
  const aligned = state.candidates.filter(isAligned);
  const saturated = saturatedPairs(aligned, state.evaluationPairs);
  state.report.hardening.saturated_pairs = saturated.length;
  const used = saturated.slice(0, state.limits.hardenPairs);
  if (used.length === 0) return;
  state.report.hardening.pairs_used = used.length;
  const generator = state.options.generators[0];
  const texts = aligned.map((candidate) => candidate.criterion.text);
  const answers = await Promise.all(
    used.map(async (pair) => {
      try {
        const messages = distillHardenMessages({ prompt: pair.prompt, preferred: pair.chosen, other: pair.rejected, criteria: texts, maxNew: hardenPerPair }, generator.promptContext);
        return { pair, criteria: (await generator.askCriteria(promptVersions.distillHarden, messages, { minItems: 0, maxItems: hardenPerPair })).criteria };
      } catch (error) {
        reportFailure(state, `hardening on pair ${pair.id}`, error);
        return { pair, criteria: [] };
      }
    }),
  );
  // A criterion already among the candidates (or written for an earlier pair) is not evaluated twice.
  const known = new Set(state.candidates.map((candidate) => comparableText(candidate.criterion.text)));
  const added = answers.flatMap(({ pair, criteria }) =>
    criteria.filter((criterion) => !known.has(comparableText(criterion.text)) && known.add(comparableText(criterion.text))).map((criterion) => addCandidate(state, criterion, 'harden', [sourceName(generator, 0)], { hardenedOn: pair.id })),
  );
  state.report.hardening.proposed = added.length;
  await evaluateCandidates(state.options.grader, added, state.evaluationPairs, state.judgeUsage);
  for (const candidate of added) if (!isAligned(candidate)) candidate.status = candidate.evaluation!.agree + candidate.evaluation!.disagree === 0 ? 'undecided' : 'misaligned';
}

/** Selection, the distilled rubric, lint, and the report. */
function finishDistill(state: DistillState): DistillResult {
  const { selected, rate } = selectCompactSet(state.candidates, { maxSelected: state.limits.selected, epsilon: state.epsilon });
  const { report } = state;
  report.selection.rate = selected.length > 0 ? rate : null;
  const pairCount = state.evaluationPairs.length;
  const orderingOf = (set: readonly Candidate[]) => (set.length === 0 ? null : pairOrdering(set.map((candidate) => ({ points: candidate.criterion.points ?? 1, evaluation: candidate.evaluation! })), pairCount));
  report.ordering = { distilled: orderingOf(selected), all_aligned: orderingOf(state.candidates.filter(isAligned)) };
  reportFailedVerdicts(state, pairCount);
  let rubric = selected.length > 0 ? rubricOfCandidates(selected, distilledMetadata(state)) : undefined;
  if (rubric === undefined) notice(state, 'no candidate favoured the preferred responses more often than the rejected ones: no rubric written');
  if (rubric && state.options.repair) rubric = applyRepair(state, rubric, selected);
  report.selection.selected = rubric?.criteria.length ?? 0;
  report.candidates = state.candidates.map(candidateRow);
  for (const generator of state.options.generators) addUsage(report.usage.generator, generator.usage);
  report.usage.judge = state.judgeUsage;
  return { rubric, report };
}

/**
 * Verdicts on the labelled pairs that failed are said, never passed over: each counts for neither
 * response (0 in the selection's vectors). When every one failed, nothing was evaluated: the
 * judge's failure is the error, not a rubric that favoured nothing.
 */
function reportFailedVerdicts(state: DistillState, pairCount: number): void {
  const evaluated = state.candidates.filter((candidate) => candidate.evaluation !== undefined);
  const failed = evaluated.reduce((sum, candidate) => sum + candidate.evaluation!.errors, 0);
  const total = evaluated.length * pairCount;
  if (failed === 0) return;
  if (failed === total) throw new RubricateError('RUBRIC_NOT_DISTILLED', `no rubric was distilled: no candidate could be evaluated; ${failed} verdicts on the labelled pairs failed (all ${total}, the judge's errors)`);
  notice(state, `${failed} of ${total} verdicts on the labelled pairs failed (the judge's errors): each counted for neither response, in the selection too`);
}

function distilledMetadata(state: DistillState): Record<string, unknown> {
  return {
    generic: true,
    distillation: {
      method: 'distill',
      prompt_versions: state.report.prompt_versions,
      generators: state.report.generators,
      pairs: state.evaluationPairs.length,
      prompts: state.groups.length,
      epsilon: state.epsilon,
      rubricate_version: rubricateVersion,
    },
  };
}

/** Lint's drops are reported with their rule, on the candidate and in the report; a rubric lint refuses is not written. */
function applyRepair(state: DistillState, rubric: Rubric, selected: readonly Candidate[]): Rubric | undefined {
  const repair = state.options.repair!(rubric);
  const byCriterion = new Map(rubric.criteria.map((criterion, index) => [criterion.id, selected[index]]));
  for (const finding of repair.dropped) {
    const candidate = finding.criterion_id === null ? undefined : byCriterion.get(finding.criterion_id);
    if (candidate) {
      candidate.status = 'lint_dropped';
      candidate.lintRule = finding.rule;
    }
    state.report.lint.dropped.push({ criterion_id: candidate?.id ?? finding.criterion_id, rule: finding.rule, message: finding.message });
    notice(state, `lint: dropped ${candidate?.id ?? finding.criterion_id} [${finding.rule}] ${finding.message}`);
  }
  state.report.lint.warnings = repair.warnings.map((finding) => ({ criterion_id: finding.criterion_id, rule: finding.rule, message: finding.message }));
  if (repair.rubric === undefined) notice(state, `lint: the distilled rubric has errors no drop fixes: ${repair.unresolved.map((finding) => `[${finding.rule}] ${finding.message}`).join('; ')}`);
  return repair.rubric;
}

function candidateRow(candidate: Candidate): Record<string, unknown> {
  const evaluation = candidate.evaluation;
  return {
    id: candidate.id,
    text: candidate.criterion.text,
    points: candidate.criterion.points ?? 1,
    origin: candidate.origin,
    sources: candidate.sources,
    ...(candidate.revisedFrom !== undefined ? { revised_from: candidate.revisedFrom } : {}),
    ...(candidate.hardenedOn !== undefined ? { hardened_on_pair: candidate.hardenedOn } : {}),
    agree: evaluation?.agree ?? 0,
    disagree: evaluation?.disagree ?? 0,
    ties: evaluation?.ties ?? 0,
    errors: evaluation?.errors ?? 0,
    status: candidate.status ?? 'redundant',
    ...(candidate.rateGain !== undefined ? { rate_gain: candidate.rateGain } : {}),
    ...(candidate.lintRule !== undefined ? { lint_rule: candidate.lintRule } : {}),
  };
}
