/**
 * Evolving rubrics for reinforcement learning (after RLER in DR Tulu and OnlineRubrics).
 * Per prompt the evolver keeps persistent criteria (given, never deactivated) and evolving
 * ones: `propose` asks the generator for new criteria from the differences between the
 * current rollouts (and a reference policy's, when given); `observe` reads the verdicts of a
 * graded group of rollouts, deactivates evolving criteria whose verdicts did not vary, and
 * keeps at most `topK` active, the most varied first. State and history live in a store
 * (`src/store/evolver-state.ts`): a SQLite file, or Redis shared by serve replicas, so a
 * trainer can restart, and a replica see another's steps, without losing its rubrics.
 * Every change is read → compute → compare-and-set, recomputed when another writer won.
 */
import { RubricateError } from '../errors.js';
import type { Judge } from '../judges/types.js';
import { normalizeMessages, normalizeRubric } from '../rubric/normalize.js';
import type { Criterion, CriterionInput, Message, Rubric } from '../rubric/schema.js';
import type { EvolverStateStore, EvolvingCriterion, HistoryEvent, PromptState, VersionedPromptState } from '../store/evolver-state.js';
import { openEvolverStateStore } from '../store/open-evolver-state.js';
import { comparableText, criterionToInput } from './criteria.js';
import { createRubricGenerator, type RubricGenerator } from './generator.js';
import { populationVariance, round } from '../statistics/descriptive.js';
import { textJaccard } from './measures.js';

export type { EvolvingCriterion, HistoryEvent } from '../store/evolver-state.js';

export interface RubricEvolverOptions {
  /** A configured rubric generator, or a Judge to build one with default settings. */
  generator: RubricGenerator | Judge;
  /** Where the per-prompt state lives: a SQLite file (`:memory:` for a throwaway evolver), a `redis://…` URL, or an opened store. */
  store: string | EvolverStateStore;
  /** Active evolving criteria kept per prompt, the most varied first (default 5). */
  topK?: number;
  /** New criteria asked for per `propose` (default 3). */
  maxNewPerStep?: number;
  /** Rollouts shown to the generator per `propose` (default 8); each is cut to `rolloutCharacterLimit`. */
  maxRollouts?: number;
  rolloutCharacterLimit?: number;
  /** Word uni+bigram Jaccard at or above which a proposal repeats a known criterion (default 0.8). */
  duplicateThreshold?: number;
  /** Verdicts needed in a group before its variance decides anything (default 2). */
  minObservations?: number;
  /** `unit` (+1 / −1 for Pitfalls, as RLER) or `importance` (the generator's importance points). */
  evolvingPoints?: 'unit' | 'importance';
}

/** One graded rollout: a results line (`ResultRecord`) fits as it is. */
export interface ObservedRollout {
  criteria: ReadonlyArray<{ id: string; met: boolean | null; value?: number | null; status?: string }>;
}

export interface ProposeResult {
  promptId: string;
  step: number;
  added: Criterion[];
  /** Proposals that repeated a known criterion (active or not). */
  duplicatesSkipped: number;
  warnings: string[];
}

export interface ObserveResult {
  promptId: string;
  step: number;
  /** Verdict variance per observed criterion id. */
  variances: Record<string, number>;
  deactivated: Array<{ criterion_id: string; reason: 'zero_variance' | 'over_top_k'; variance: number }>;
  /** Ids of the criteria now active (persistent first). */
  active: string[];
}

export interface StepOptions {
  /** The trainer's step number; default: one more than the prompt's last step. */
  step?: number;
}

export interface RubricEvolver {
  /** Sets the prompt's persistent criteria (replacing earlier persistent ones). */
  setPersistent(promptId: string, prompt: string | Message[], criteria: Rubric | readonly CriterionInput[], options?: StepOptions): Promise<Criterion[]>;
  /** New evolving criteria from the differences between rollouts; starts a new step. */
  propose(promptId: string, prompt: string | Message[], rollouts: readonly string[], referenceRollouts?: readonly string[], options?: StepOptions): Promise<ProposeResult>;
  /** Reads a graded group of rollouts: deactivates zero-variance criteria and caps the active set at topK. */
  observe(promptId: string, gradedRollouts: readonly ObservedRollout[]): Promise<ObserveResult>;
  /** Persistent plus active evolving criteria, ready to grade with; undefined for an unknown prompt. */
  activeRubric(promptId: string): Promise<Rubric | undefined>;
  /** Every criterion ever held for the prompt, active or not. */
  criteria(promptId: string): Promise<EvolvingCriterion[]>;
  history(promptId: string): Promise<HistoryEvent[]>;
  /** Resolves once the store answers (a Redis store: fails clearly when it cannot be reached). */
  ready(): Promise<void>;
  close(): Promise<void>;
}

function isRubricGenerator(value: RubricGenerator | Judge): value is RubricGenerator {
  return typeof (value as RubricGenerator).propose === 'function';
}

/** The evolver's settings and store, which its module-level steps read. */
interface EvolverState {
  generator: RubricGenerator;
  topK: number;
  maxNew: number;
  maxRollouts: number;
  characterLimit: number;
  duplicateThreshold: number;
  minObservations: number;
  pointsMode: NonNullable<RubricEvolverOptions['evolvingPoints']>;
  store: Exclude<RubricEvolverOptions['store'], string>;
  closed: boolean;
}

function evolverState(options: RubricEvolverOptions): EvolverState {
  return {
    generator: isRubricGenerator(options.generator) ? options.generator : createRubricGenerator({ generator: options.generator }),
    topK: Math.max(0, options.topK ?? 5),
    maxNew: Math.max(1, options.maxNewPerStep ?? 3),
    maxRollouts: Math.max(2, options.maxRollouts ?? 8),
    characterLimit: options.rolloutCharacterLimit ?? 4000,
    duplicateThreshold: options.duplicateThreshold ?? 0.8,
    minObservations: Math.max(2, options.minObservations ?? 2),
    pointsMode: options.evolvingPoints ?? 'unit',
    store: typeof options.store === 'string' ? openEvolverStateStore(options.store) : options.store,
    closed: false,
  };
}

/**
 * Evolving rubrics during RL: criteria proposed from each group of rollouts, kept while they tell responses apart.
 *
 * @example
 * ```ts
 * import { createJudge } from 'rubricate';
 * import { createRubricEvolver } from 'rubricate/generation';
 * const evolver = createRubricEvolver({ generator: await createJudge({ model: 'openai:gpt-4.1' }), store: ':memory:', topK: 5 });
 * ```
 */
export function createRubricEvolver(options: RubricEvolverOptions): RubricEvolver {
  const state = evolverState(options);
  const { store } = state;
  const assertOpen = () => {
    if (state.closed) throw new RubricateError('INTERNAL', 'the rubric evolver is closed');
  };
  return {
    async setPersistent(promptId, prompt, criteria, stepOptions = {}) {
      assertOpen();
      return setPersistentCriteria(state, promptId, prompt, criteria, stepOptions.step);
    },
    async propose(promptId, prompt, rollouts, referenceRollouts, stepOptions = {}) {
      assertOpen();
      return proposeCriteria(state, { promptId, prompt, rollouts, referenceRollouts, step: stepOptions.step });
    },
    async observe(promptId, gradedRollouts) {
      assertOpen();
      return observeRollouts(state, promptId, gradedRollouts);
    },
    async activeRubric(promptId) {
      assertOpen();
      return activeRubricOf(state, promptId);
    },
    async criteria(promptId) {
      assertOpen();
      return (await store.read(promptId))?.criteria ?? [];
    },
    async history(promptId) {
      assertOpen();
      return store.history(promptId);
    },
    ready() {
      return store.ready();
    },
    async close() {
      if (state.closed) return;
      state.closed = true;
      await store.close();
    },
  };
}

type StateChange<T> = { state: PromptState; events: HistoryEvent[]; result: T } | { result: T; state?: undefined };

/**
 * Applies `change` to the prompt's current state and writes it if no one else wrote
 * meanwhile; otherwise reads again and applies it again. `change` returns the new state
 * and its history events, or undefined to write nothing.
 */
async function update<T>(state: EvolverState, promptId: string, change: (current: VersionedPromptState | undefined) => StateChange<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    const current = await state.store.read(promptId);
    const outcome = change(current);
    if (outcome.state === undefined) return outcome.result;
    if (await state.store.write(promptId, current?.version ?? 0, outcome.state, outcome.events)) return outcome.result;
    if (attempt >= 50) throw new RubricateError('STORE_BUSY', `the rubric of prompt "${promptId}" kept changing under this update (${attempt} attempts)`, { promptId });
  }
}

function copyCriteria(state: VersionedPromptState | undefined): EvolvingCriterion[] {
  return (state?.criteria ?? []).map((entry) => ({ ...entry }));
}

async function setPersistentCriteria(state: EvolverState, promptId: string, prompt: Parameters<RubricEvolver['setPersistent']>[1], criteria: Parameters<RubricEvolver['setPersistent']>[2], givenStep: number | undefined): Promise<Criterion[]> {
  const inputs = Array.isArray(criteria) ? (criteria as readonly CriterionInput[]) : (criteria as Rubric).criteria.map(criterionToInput);
  const rubric = normalizeRubric({ criteria: inputs });
  const messages = JSON.stringify(normalizeMessages(prompt));
  return update(state, promptId, (current) => {
    const step = givenStep ?? current?.step ?? 0;
    // Persistent criteria come first in the rubric, before every evolving one.
    const persistent: EvolvingCriterion[] = rubric.criteria.map((criterion) => ({ criterion, origin: 'persistent', active: true, added_step: step, observations: 0 }));
    const evolving = copyCriteria(current).filter((entry) => entry.origin === 'evolving');
    const events: HistoryEvent[] = rubric.criteria.map((criterion) => ({ step, event: 'persistent', criterion_id: criterion.id, text: criterion.text }));
    return { state: { prompt: messages, step, criteria: [...persistent, ...evolving] }, events, result: rubric.criteria };
  });
}

interface ProposeRequest {
  promptId: string;
  prompt: Parameters<RubricEvolver['propose']>[1];
  rollouts: readonly string[];
  referenceRollouts?: readonly string[];
  step?: number;
}

async function proposeCriteria(state: EvolverState, request: ProposeRequest): ReturnType<RubricEvolver['propose']> {
  const { promptId, rollouts, referenceRollouts } = request;
  if (rollouts.length < 2) throw new RubricateError('INPUT_INVALID', 'propose needs at least two rollouts to compare', { field: 'rollouts' });
  const messages = normalizeMessages(request.prompt);
  const known = await state.store.read(promptId);
  const shown = rollouts.slice(0, state.maxRollouts).map((rollout) => cut(rollout, state.characterLimit));
  const reference = referenceRollouts?.slice(0, state.maxRollouts).map((rollout) => cut(rollout, state.characterLimit));
  const existing = (known?.criteria ?? []).filter((entry) => entry.active).map((entry) => entry.criterion);
  const expectedStep = request.step ?? (known?.step ?? 0) + 1;
  const proposal = await state.generator.propose(
    { prompt: messages, rollouts: shown, referenceRollouts: reference && reference.length > 0 ? reference : undefined, existing, maxNew: state.maxNew },
    { sample: expectedStep },
  );
  // Merged into the state as it is when written: another propose for this prompt (on any replica) may have written meanwhile,
  // so the step counts on from that state too (two steps taken at once are two steps).
  const { added, duplicatesSkipped, step } = await update(state, promptId, (current) => mergeProposal(state, current, proposal.criteria, { messages, step: request.step }));
  return { promptId, step, added, duplicatesSkipped, warnings: proposal.warnings };
}

function mergeProposal(state: EvolverState, current: VersionedPromptState | undefined, proposed: readonly CriterionInput[], context: { messages: Message[]; step?: number }) {
  const step = context.step ?? (current?.step ?? 0) + 1;
  const criteria = copyCriteria(current);
  const texts = criteria.map((entry) => entry.criterion.text);
  const newlyAdded: Criterion[] = [];
  const events: HistoryEvent[] = [];
  let duplicates = 0;
  for (const input of proposed) {
    const repeats = texts.some((text) => comparableText(text) === comparableText(input.text) || textJaccard(text, input.text) >= state.duplicateThreshold);
    if (repeats) {
      duplicates += 1;
      continue;
    }
    const points = state.pointsMode === 'unit' ? ((input.points ?? 1) < 0 ? -1 : 1) : (input.points ?? 1);
    const [criterion] = normalizeRubric({ criteria: [{ ...input, points }] }).criteria;
    criterion.metadata = { ...criterion.metadata, origin: 'evolving', added_step: step };
    criteria.push({ criterion, origin: 'evolving', active: true, added_step: step, observations: 0 });
    events.push({ step, event: 'added', criterion_id: criterion.id, text: criterion.text });
    texts.push(criterion.text);
    newlyAdded.push(criterion);
  }
  return { state: { prompt: JSON.stringify(context.messages), step, criteria }, events, result: { added: newlyAdded, duplicatesSkipped: duplicates, step } };
}

/** Per criterion id, the verdict values of the graded rollouts (errors and skips left out). */
function verdictValues(gradedRollouts: Parameters<RubricEvolver['observe']>[1]): Map<string, number[]> {
  const values = new Map<string, number[]>();
  for (const rollout of gradedRollouts) {
    for (const verdict of rollout.criteria) {
      if (verdict.status !== undefined && verdict.status !== 'ok') continue;
      const value = typeof verdict.value === 'number' ? verdict.value : verdict.met === null ? null : verdict.met ? 1 : 0;
      if (value === null) continue;
      const list = values.get(verdict.id);
      if (list) list.push(value);
      else values.set(verdict.id, [value]);
    }
  }
  return values;
}

function observeRollouts(state: EvolverState, promptId: string, gradedRollouts: Parameters<RubricEvolver['observe']>[1]): Promise<ObserveResult> {
  const values = verdictValues(gradedRollouts);
  return update(state, promptId, (current) => {
    if (!current) throw new RubricateError('NOT_FOUND', `no rubric state for prompt "${promptId}"`, { field: 'promptId' });
    const step = current.step;
    const entries = copyCriteria(current);
    const variances: Record<string, number> = {};
    const deactivated: ObserveResult['deactivated'] = [];
    const events: HistoryEvent[] = [];
    const deactivate = (entry: EvolvingCriterion, reason: 'zero_variance' | 'over_top_k', variance: number) => {
      entry.active = false;
      entry.deactivated_step = step;
      entry.deactivation_reason = reason;
      entry.last_variance = variance;
      events.push({ step, event: 'deactivated', criterion_id: entry.criterion.id, text: entry.criterion.text, reason, variance });
      deactivated.push({ criterion_id: entry.criterion.id, reason, variance });
    };
    const ranked: Array<{ entry: EvolvingCriterion; variance: number }> = [];
    for (const entry of entries) {
      if (!entry.active) continue;
      const observed = values.get(entry.criterion.id);
      if (!observed || observed.length < state.minObservations) continue;
      const variance = round(populationVariance(observed), 9);
      variances[entry.criterion.id] = variance;
      entry.last_variance = variance;
      entry.observations += 1;
      if (entry.origin === 'persistent') continue;
      if (variance === 0) deactivate(entry, 'zero_variance', variance);
      else ranked.push({ entry, variance });
    }
    // Cap the active evolving set at topK; criteria not observed this time keep their place.
    let excess = entries.filter((entry) => entry.active && entry.origin === 'evolving').length - state.topK;
    if (excess > 0) {
      const byVariance = [...ranked].sort((first, second) => first.variance - second.variance || second.entry.added_step - first.entry.added_step);
      for (const { entry, variance } of byVariance) {
        if (excess <= 0) break;
        deactivate(entry, 'over_top_k', variance);
        excess -= 1;
      }
    }
    const active = entries.filter((entry) => entry.active).map((entry) => entry.criterion.id);
    return { state: { prompt: current.prompt, step, criteria: entries }, events, result: { promptId, step, variances, deactivated, active } };
  });
}

async function activeRubricOf(state: EvolverState, promptId: string): Promise<Rubric | undefined> {
  const current = await state.store.read(promptId);
  if (!current) return undefined;
  const active = current.criteria.filter((entry) => entry.active);
  if (active.length === 0) return undefined;
  return normalizeRubric({
    id: `${promptId}@${current.step}`,
    criteria: active.map((entry) => criterionToInput(entry.criterion)),
    metadata: {
      evolving: {
        prompt_id: promptId,
        step: current.step,
        persistent: active.filter((entry) => entry.origin === 'persistent').length,
        evolving: active.filter((entry) => entry.origin === 'evolving').length,
      },
    },
  });
}

function cut(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit)}\n[… ${text.length - limit} more characters]` : text;
}
