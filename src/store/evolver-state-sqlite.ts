/** Evolving-rubric state in one SQLite file (the embedded default): three tables, each write one transaction. */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { RubricateError } from '../errors.js';
import type { Criterion } from '../rubric/schema.js';
import { safeParseJson } from '../util/json.js';
import { openSqlite, type SqliteDatabase } from './sqlite-driver.js';
import type { EvolverStateStore, EvolvingCriterion, HistoryEvent, PromptState, VersionedPromptState } from './evolver-state.js';

interface PromptRow {
  prompt: string;
  step: number;
  version: number;
}

interface CriterionRow {
  criterion_id: string;
  criterion: string;
  origin: 'persistent' | 'evolving';
  active: number;
  added_step: number;
  deactivated_step: number | null;
  deactivation_reason: 'zero_variance' | 'over_top_k' | null;
  last_variance: number | null;
  observations: number;
}

interface HistoryRow {
  step: number;
  event: HistoryEvent['event'];
  criterion_id: string;
  text: string;
  reason: string | null;
  variance: number | null;
}

export class SqliteEvolverStateStore implements EvolverStateStore {
  private readonly database: SqliteDatabase;
  private readonly statements;

  constructor(private readonly path: string) {
    try {
      if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
      this.database = openSqlite(path);
      this.database.pragma('journal_mode = WAL');
      this.database.pragma('synchronous = NORMAL');
      this.database.pragma('busy_timeout = 10000');
      this.database.exec(`
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
      // Files written before versions existed: every prompt starts at version 1.
      const columns = this.database.prepare<[], { name: string }>('PRAGMA table_info(evolver_prompts)').all();
      if (!columns.some((column) => column.name === 'version')) this.database.exec('ALTER TABLE evolver_prompts ADD COLUMN version INTEGER NOT NULL DEFAULT 1');
    } catch (error) {
      throw new RubricateError('CONFIG_INVALID', `cannot open the rubric evolver store at ${path}: ${(error as Error).message}`, { field: 'store' }, { cause: error });
    }
    this.statements = {
      prompt: this.database.prepare<[string], PromptRow>('SELECT prompt, step, version FROM evolver_prompts WHERE prompt_id = ?'),
      upsertPrompt: this.database.prepare<[string, string, number, number]>(
        'INSERT INTO evolver_prompts (prompt_id, prompt, step, version) VALUES (?, ?, ?, ?) ON CONFLICT (prompt_id) DO UPDATE SET prompt = excluded.prompt, step = excluded.step, version = excluded.version',
      ),
      criteria: this.database.prepare<[string], CriterionRow>('SELECT * FROM evolver_criteria WHERE prompt_id = ? ORDER BY position'),
      deleteCriteria: this.database.prepare<[string]>('DELETE FROM evolver_criteria WHERE prompt_id = ?'),
      insertCriterion: this.database.prepare<[string, string, number, string, string, number, number, number | null, string | null, number | null, number]>(
        'INSERT INTO evolver_criteria (prompt_id, criterion_id, position, criterion, origin, active, added_step, deactivated_step, deactivation_reason, last_variance, observations) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      history: this.database.prepare<[string], HistoryRow>('SELECT step, event, criterion_id, text, reason, variance FROM evolver_history WHERE prompt_id = ? ORDER BY sequence'),
      addHistory: this.database.prepare<[string, number, string, string, string, string | null, number | null]>(
        'INSERT INTO evolver_history (prompt_id, step, event, criterion_id, text, reason, variance) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
    };
  }

  async read(promptId: string): Promise<VersionedPromptState | undefined> {
    this.assertOpen();
    const row = this.statements.prompt.get(promptId);
    if (!row) return undefined;
    const criteria = this.statements.criteria.all(promptId).map((criterionRow) => {
      const parsed = safeParseJson(criterionRow.criterion);
      if (!parsed.ok) throw new RubricateError('INTERNAL', `damaged criterion ${criterionRow.criterion_id} in the evolver store at ${this.path}`, { promptId });
      const entry: EvolvingCriterion = {
        criterion: parsed.value as Criterion,
        origin: criterionRow.origin,
        active: criterionRow.active === 1,
        added_step: criterionRow.added_step,
        observations: criterionRow.observations,
      };
      if (criterionRow.deactivated_step !== null) entry.deactivated_step = criterionRow.deactivated_step;
      if (criterionRow.deactivation_reason !== null) entry.deactivation_reason = criterionRow.deactivation_reason;
      if (criterionRow.last_variance !== null) entry.last_variance = criterionRow.last_variance;
      return entry;
    });
    return { prompt: row.prompt, step: row.step, version: row.version, criteria };
  }

  async write(promptId: string, expectedVersion: number, state: PromptState, events: readonly HistoryEvent[]): Promise<boolean> {
    this.assertOpen();
    return this.database.transaction((): boolean => {
      const version = this.statements.prompt.get(promptId)?.version ?? 0;
      if (version !== expectedVersion) return false;
      this.statements.upsertPrompt.run(promptId, state.prompt, state.step, version + 1);
      this.statements.deleteCriteria.run(promptId);
      state.criteria.forEach((entry, position) => {
        this.statements.insertCriterion.run(
          promptId,
          entry.criterion.id,
          position,
          JSON.stringify(entry.criterion),
          entry.origin,
          entry.active ? 1 : 0,
          entry.added_step,
          entry.deactivated_step ?? null,
          entry.deactivation_reason ?? null,
          entry.last_variance ?? null,
          entry.observations,
        );
      });
      for (const event of events) this.statements.addHistory.run(promptId, event.step, event.event, event.criterion_id, event.text, event.reason ?? null, event.variance ?? null);
      return true;
    }, 'immediate');
  }

  async history(promptId: string): Promise<HistoryEvent[]> {
    this.assertOpen();
    return this.statements.history.all(promptId).map((row) => {
      const event: HistoryEvent = { step: row.step, event: row.event, criterion_id: row.criterion_id, text: row.text };
      if (row.reason !== null) event.reason = row.reason;
      if (row.variance !== null) event.variance = row.variance;
      return event;
    });
  }

  async ready(): Promise<void> {
    this.assertOpen();
  }

  private assertOpen(): void {
    if (!this.database.open) throw new RubricateError('INTERNAL', 'the rubric evolver is closed');
  }

  async close(): Promise<void> {
    if (this.database.open) this.database.close();
  }
}
