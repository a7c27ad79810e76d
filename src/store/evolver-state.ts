/**
 * Where evolving rubrics keep their state: per prompt, the criteria with their status and
 * an append-only history. Two implementations with the same semantics: SQLite (one file,
 * the embedded default) and Redis/Valkey (shared by serve replicas, so a step taken on one
 * replica is seen by every other).
 *
 * Several replicas may update one prompt at once, so writes are compare-and-set on the
 * prompt's version (SQLite: a transaction; Redis: one Lua script): a writer that lost the
 * race reads the new state and applies its change again. Nothing is ever locked.
 */
import type { Criterion } from '../rubric/schema.js';

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

export interface PromptState {
  /** The prompt as JSON messages. */
  prompt: string;
  step: number;
  /** In rubric order: persistent criteria first, then evolving ones as they were added. */
  criteria: EvolvingCriterion[];
}

export interface VersionedPromptState extends PromptState {
  /** Increases with every write; 0 for a prompt never written. */
  version: number;
}

export interface EvolverStateStore {
  /** The prompt's state, or undefined for a prompt never written. */
  read(promptId: string): Promise<VersionedPromptState | undefined>;
  /**
   * Replaces the prompt's state and appends `events` to its history, if its version is still
   * `expectedVersion` (0: never written). False when another writer got there first.
   */
  write(promptId: string, expectedVersion: number, state: PromptState, events: readonly HistoryEvent[]): Promise<boolean>;
  history(promptId: string): Promise<HistoryEvent[]>;
  /**
   * Resolves once the store answers. A network store fails clearly when it cannot be reached
   * within `timeoutMs` (5 s by default).
   */
  ready(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}
