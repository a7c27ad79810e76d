/**
 * Evolving rubrics for reinforcement learning (after RLER in DR Tulu and OnlineRubrics).
 * Per prompt the evolver keeps persistent criteria (given, never deactivated) and evolving
 * ones: `propose` asks the generator for new criteria from the differences between the
 * current rollouts (and a reference policy's, when given); `observe` reads the verdicts of a
 * graded group of rollouts, deactivates evolving criteria whose verdicts did not vary, and
 * keeps at most `topK` active, the most varied first. State and history live in SQLite, so
 * a trainer can restart without losing its rubrics.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { RubricateError } from '../errors.js';
import type { Judge } from '../judges/types.js';
import { normalizeMessages, normalizeRubric } from '../rubric/normalize.js';
import type { Criterion, CriterionInput, Message, Rubric } from '../rubric/schema.js';
import { safeParseJson } from '../util/json.js';
import { comparableText, criterionToInput } from './criteria.js';
import { createRubricGenerator, type RubricGenerator } from './generator.js';
import { populationVariance, round, textJaccard } from './statistics.js';

export interface RubricEvolverOptions {
  /** A configured rubric generator, or a Judge to build one with default settings. */
  generator: RubricGenerator | Judge;
  /** SQLite file for the per-prompt state (`:memory:` for a throwaway evolver). */
  store: string;
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

export interface EvolvingCriterion {
  criterion: Criterion;
  origin: 'persistent' | 'evolving';
  active: boolean;
  added_step: number;
  deactivated_step?: number;
  deactivation_reason?: 'zero_variance' | 'over_top_k';
  /** Variance of the verdicts in the last observed group. */
  last_variance?: number;
  observations: number;
}

export interface HistoryEvent {
  step: number;
  event: 'persistent' | 'added' | 'deactivated';
  criterion_id: string;
  text: string;
  reason?: string;
  variance?: number;
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
  setPersistent(promptId: string, prompt: string | Message[], criteria: Rubric | readonly CriterionInput[], options?: StepOptions): Criterion[];
  /** New evolving criteria from the differences between rollouts; starts a new step. */
  propose(promptId: string, prompt: string | Message[], rollouts: readonly string[], referenceRollouts?: readonly string[], options?: StepOptions): Promise<ProposeResult>;
  /** Reads a graded group of rollouts: deactivates zero-variance criteria and caps the active set at topK. */
  observe(promptId: string, gradedRollouts: readonly ObservedRollout[]): ObserveResult;
  /** Persistent plus active evolving criteria, ready to grade with; undefined for an unknown prompt. */
  activeRubric(promptId: string): Rubric | undefined;
  /** Every criterion ever held for the prompt, active or not. */
  criteria(promptId: string): EvolvingCriterion[];
  history(promptId: string): HistoryEvent[];
  close(): void;
}

interface PromptRow {
  prompt_id: string;
  prompt: string;
  step: number;
}

interface CriterionRow {
  prompt_id: string;
  criterion_id: string;
  position: number;
  criterion: string;
  origin: 'persistent' | 'evolving';
  active: number;
  added_step: number;
  deactivated_step: number | null;
  deactivation_reason: 'zero_variance' | 'over_top_k' | null;
  last_variance: number | null;
  observations: number;
}

function isRubricGenerator(value: RubricGenerator | Judge): value is RubricGenerator {
  return typeof (value as RubricGenerator).propose === 'function';
}

export function createRubricEvolver(options: RubricEvolverOptions): RubricEvolver {
  const generator = isRubricGenerator(options.generator) ? options.generator : createRubricGenerator({ generator: options.generator });
  const topK = Math.max(0, options.topK ?? 5);
  const maxNew = Math.max(1, options.maxNewPerStep ?? 3);
  const maxRollouts = Math.max(2, options.maxRollouts ?? 8);
  const characterLimit = options.rolloutCharacterLimit ?? 4000;
  const duplicateThreshold = options.duplicateThreshold ?? 0.8;
  const minObservations = Math.max(2, options.minObservations ?? 2);
  const pointsMode = options.evolvingPoints ?? 'unit';

  let database: Database.Database;
  try {
    if (options.store !== ':memory:') mkdirSync(dirname(options.store), { recursive: true });
    database = new Database(options.store);
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = NORMAL');
    database.pragma('busy_timeout = 10000');
    database.exec(`
      CREATE TABLE IF NOT EXISTS evolver_prompts (
        prompt_id TEXT PRIMARY KEY,
        prompt TEXT NOT NULL,
        step INTEGER NOT NULL
      );
      CREATE TABLE IF NOT EXISTS evolver_criteria (
        prompt_id TEXT NOT NULL,
        criterion_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        criterion TEXT NOT NULL,
        origin TEXT NOT NULL,
        active INTEGER NOT NULL,
        added_step INTEGER NOT NULL,
        deactivated_step INTEGER,
        deactivation_reason TEXT,
        last_variance REAL,
        observations INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (prompt_id, criterion_id)
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS evolver_history (
        sequence INTEGER PRIMARY KEY AUTOINCREMENT,
        prompt_id TEXT NOT NULL,
        step INTEGER NOT NULL,
        event TEXT NOT NULL,
        criterion_id TEXT NOT NULL,
        text TEXT NOT NULL,
        reason TEXT,
        variance REAL
      );
      CREATE INDEX IF NOT EXISTS evolver_history_prompt ON evolver_history (prompt_id, sequence);
    `);
  } catch (error) {
    throw new RubricateError('CONFIG_INVALID', `cannot open the rubric evolver store at ${options.store}: ${(error as Error).message}`, { field: 'store' }, { cause: error });
  }

  const statements = {
    prompt: database.prepare<[string], PromptRow>('SELECT prompt_id, prompt, step FROM evolver_prompts WHERE prompt_id = ?'),
    upsertPrompt: database.prepare<[string, string, number]>(
      'INSERT INTO evolver_prompts (prompt_id, prompt, step) VALUES (?, ?, ?) ON CONFLICT (prompt_id) DO UPDATE SET prompt = excluded.prompt, step = excluded.step',
    ),
    criteria: database.prepare<[string], CriterionRow>('SELECT * FROM evolver_criteria WHERE prompt_id = ? ORDER BY position'),
    insertCriterion: database.prepare<[string, string, number, string, string, number]>(
      'INSERT INTO evolver_criteria (prompt_id, criterion_id, position, criterion, origin, active, added_step) VALUES (?, ?, ?, ?, ?, 1, ?)',
    ),
    deletePersistent: database.prepare<[string]>("DELETE FROM evolver_criteria WHERE prompt_id = ? AND origin = 'persistent'"),
    deactivate: database.prepare<[number, string, number, string, string]>(
      'UPDATE evolver_criteria SET active = 0, deactivated_step = ?, deactivation_reason = ?, last_variance = ? WHERE prompt_id = ? AND criterion_id = ?',
    ),
    recordVariance: database.prepare<[number, string, string]>(
      'UPDATE evolver_criteria SET last_variance = ?, observations = observations + 1 WHERE prompt_id = ? AND criterion_id = ?',
    ),
    maxPosition: database.prepare<[string], { position: number | null }>('SELECT MAX(position) AS position FROM evolver_criteria WHERE prompt_id = ?'),
    history: database.prepare<[string], { step: number; event: HistoryEvent['event']; criterion_id: string; text: string; reason: string | null; variance: number | null }>(
      'SELECT step, event, criterion_id, text, reason, variance FROM evolver_history WHERE prompt_id = ? ORDER BY sequence',
    ),
    addHistory: database.prepare<[string, number, string, string, string, string | null, number | null]>(
      'INSERT INTO evolver_history (prompt_id, step, event, criterion_id, text, reason, variance) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
  };

  function readCriteria(promptId: string): EvolvingCriterion[] {
    return statements.criteria.all(promptId).map((row) => {
      const parsed = safeParseJson(row.criterion);
      if (!parsed.ok) throw new RubricateError('INTERNAL', `damaged criterion ${row.criterion_id} in the evolver store`, { promptId });
      const entry: EvolvingCriterion = {
        criterion: parsed.value as Criterion,
        origin: row.origin,
        active: row.active === 1,
        added_step: row.added_step,
        observations: row.observations,
      };
      if (row.deactivated_step !== null) entry.deactivated_step = row.deactivated_step;
      if (row.deactivation_reason !== null) entry.deactivation_reason = row.deactivation_reason;
      if (row.last_variance !== null) entry.last_variance = row.last_variance;
      return entry;
    });
  }

  function promptMessages(prompt: string | Message[]): Message[] {
    return normalizeMessages(prompt);
  }

  function nextPosition(promptId: string): number {
    return (statements.maxPosition.get(promptId)?.position ?? -1) + 1;
  }

  function assertOpen(): void {
    if (!database.open) throw new RubricateError('INTERNAL', 'the rubric evolver is closed');
  }

  return {
    setPersistent(promptId, prompt, criteria, stepOptions = {}) {
      assertOpen();
      const inputs = Array.isArray(criteria) ? (criteria as readonly CriterionInput[]) : (criteria as Rubric).criteria.map(criterionToInput);
      const rubric = normalizeRubric({ criteria: inputs });
      const write = database.transaction(() => {
        const existing = statements.prompt.get(promptId);
        const step = stepOptions.step ?? existing?.step ?? 0;
        statements.upsertPrompt.run(promptId, JSON.stringify(promptMessages(prompt)), step);
        statements.deletePersistent.run(promptId);
        // Persistent criteria come first in the rubric: positions below every evolving one.
        rubric.criteria.forEach((criterion, index) => {
          statements.insertCriterion.run(promptId, criterion.id, -rubric.criteria.length + index, JSON.stringify(criterion), 'persistent', step);
          statements.addHistory.run(promptId, step, 'persistent', criterion.id, criterion.text, null, null);
        });
      });
      write();
      return rubric.criteria;
    },

    async propose(promptId, prompt, rollouts, referenceRollouts, stepOptions = {}) {
      assertOpen();
      if (rollouts.length < 2) throw new RubricateError('INPUT_INVALID', 'propose needs at least two rollouts to compare', { field: 'rollouts' });
      const messages = promptMessages(prompt);
      const known = readCriteria(promptId);
      const shown = rollouts.slice(0, maxRollouts).map((rollout) => cut(rollout, characterLimit));
      const reference = referenceRollouts?.slice(0, maxRollouts).map((rollout) => cut(rollout, characterLimit));
      const existing = known.filter((entry) => entry.active).map((entry) => entry.criterion);
      const previousStep = statements.prompt.get(promptId)?.step ?? 0;
      const step = stepOptions.step ?? previousStep + 1;
      const proposal = await generator.propose(
        { prompt: messages, rollouts: shown, referenceRollouts: reference && reference.length > 0 ? reference : undefined, existing, maxNew },
        { sample: step },
      );
      const added: Criterion[] = [];
      let duplicatesSkipped = 0;
      const write = database.transaction(() => {
        statements.upsertPrompt.run(promptId, JSON.stringify(messages), step);
        // Read again inside the transaction: another propose for this prompt may have written meanwhile.
        const texts = readCriteria(promptId).map((entry) => entry.criterion.text);
        let position = nextPosition(promptId);
        for (const input of proposal.criteria) {
          const repeats = texts.some((text) => comparableText(text) === comparableText(input.text) || textJaccard(text, input.text) >= duplicateThreshold);
          if (repeats) {
            duplicatesSkipped += 1;
            continue;
          }
          const points = pointsMode === 'unit' ? ((input.points ?? 1) < 0 ? -1 : 1) : (input.points ?? 1);
          const [criterion] = normalizeRubric({ criteria: [{ ...input, points }] }).criteria;
          criterion.metadata = { ...criterion.metadata, origin: 'evolving', added_step: step };
          statements.insertCriterion.run(promptId, criterion.id, position, JSON.stringify(criterion), 'evolving', step);
          statements.addHistory.run(promptId, step, 'added', criterion.id, criterion.text, null, null);
          position += 1;
          texts.push(criterion.text);
          added.push(criterion);
        }
      });
      write();
      return { promptId, step, added, duplicatesSkipped, warnings: proposal.warnings };
    },

    observe(promptId, gradedRollouts) {
      assertOpen();
      const promptRow = statements.prompt.get(promptId);
      if (!promptRow) throw new RubricateError('NOT_FOUND', `no rubric state for prompt "${promptId}"`, { field: 'promptId' });
      const step = promptRow.step;
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
      const entries = readCriteria(promptId);
      const variances: Record<string, number> = {};
      const deactivated: ObserveResult['deactivated'] = [];
      const write = database.transaction(() => {
        const ranked: Array<{ entry: EvolvingCriterion; variance: number }> = [];
        for (const entry of entries) {
          if (!entry.active) continue;
          const observed = values.get(entry.criterion.id);
          if (!observed || observed.length < minObservations) continue;
          const variance = round(populationVariance(observed), 9);
          variances[entry.criterion.id] = variance;
          statements.recordVariance.run(variance, promptId, entry.criterion.id);
          if (entry.origin === 'persistent') continue;
          if (variance === 0) {
            statements.deactivate.run(step, 'zero_variance', variance, promptId, entry.criterion.id);
            statements.addHistory.run(promptId, step, 'deactivated', entry.criterion.id, entry.criterion.text, 'zero_variance', variance);
            deactivated.push({ criterion_id: entry.criterion.id, reason: 'zero_variance', variance });
            entry.active = false;
          } else {
            ranked.push({ entry, variance });
          }
        }
        // Cap the active evolving set at topK; criteria not observed this time keep their place.
        const activeEvolving = entries.filter((entry) => entry.active && entry.origin === 'evolving');
        let excess = activeEvolving.length - topK;
        if (excess > 0) {
          const byVariance = [...ranked].sort((first, second) => first.variance - second.variance || second.entry.added_step - first.entry.added_step);
          for (const { entry, variance } of byVariance) {
            if (excess <= 0) break;
            statements.deactivate.run(step, 'over_top_k', variance, promptId, entry.criterion.id);
            statements.addHistory.run(promptId, step, 'deactivated', entry.criterion.id, entry.criterion.text, 'over_top_k', variance);
            deactivated.push({ criterion_id: entry.criterion.id, reason: 'over_top_k', variance });
            entry.active = false;
            excess -= 1;
          }
        }
      });
      write();
      const active = entries.filter((entry) => entry.active).map((entry) => entry.criterion.id);
      return { promptId, step, variances, deactivated, active };
    },

    activeRubric(promptId) {
      assertOpen();
      const promptRow = statements.prompt.get(promptId);
      if (!promptRow) return undefined;
      const active = readCriteria(promptId).filter((entry) => entry.active);
      if (active.length === 0) return undefined;
      return normalizeRubric({
        id: `${promptId}@${promptRow.step}`,
        criteria: active.map((entry) => criterionToInput(entry.criterion)),
        metadata: {
          evolving: {
            prompt_id: promptId,
            step: promptRow.step,
            persistent: active.filter((entry) => entry.origin === 'persistent').length,
            evolving: active.filter((entry) => entry.origin === 'evolving').length,
          },
        },
      });
    },

    criteria(promptId) {
      assertOpen();
      return readCriteria(promptId);
    },

    history(promptId) {
      assertOpen();
      return statements.history.all(promptId).map((row) => {
        const event: HistoryEvent = { step: row.step, event: row.event, criterion_id: row.criterion_id, text: row.text };
        if (row.reason !== null) event.reason = row.reason;
        if (row.variance !== null) event.variance = row.variance;
        return event;
      });
    },

    close() {
      if (database.open) database.close();
    },
  };
}

function cut(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit)}\n[… ${text.length - limit} more characters]` : text;
}
