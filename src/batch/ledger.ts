/**
 * The batch ledger: which provider batches this cache has submitted and which requests
 * (custom ids) each holds. It lives in the reply cache's SQLite file, in its own tables, and
 * every step is written before the next network call: planned (before the upload), uploaded
 * (file id), created (batch id). A rerun reads it and attaches to what is in flight.
 */
import { openSqlite, type SqliteDatabase } from '../store/sqlite-driver.js';

export interface LedgerBatch {
  localId: string;
  provider: string;
  endpoint: string;
  model: string;
  /** Which model of the command sent it (`judge`, `generator`): a rerun attaches each to the same one. */
  role: string;
  fileId: string | null;
  batchId: string | null;
  status: string;
  createdAt: number;
  requestCount: number;
  completed: number;
  failed: number;
  promptTokens: number;
  cachedPromptTokens: number;
  completionTokens: number;
  /** Input tokens the batch puts in the provider's queue (estimated when submitted; 0 when not counted). */
  enqueuedTokens: number;
  /** Results read and handed over; a delivered batch is not attached to again. */
  delivered: boolean;
}

interface Row {
  local_id: string;
  provider: string;
  endpoint: string;
  model: string;
  role: string;
  file_id: string | null;
  batch_id: string | null;
  status: string;
  created_at: number;
  request_count: number;
  completed: number;
  failed: number;
  prompt_tokens: number;
  cached_prompt_tokens: number;
  completion_tokens: number;
  enqueued_tokens: number | null;
  delivered: number;
}

function fromRow(row: Row): LedgerBatch {
  return {
    localId: row.local_id,
    provider: row.provider,
    endpoint: row.endpoint,
    model: row.model,
    role: row.role,
    fileId: row.file_id,
    batchId: row.batch_id,
    status: row.status,
    createdAt: row.created_at,
    requestCount: row.request_count,
    completed: row.completed,
    failed: row.failed,
    promptTokens: row.prompt_tokens,
    cachedPromptTokens: row.cached_prompt_tokens,
    completionTokens: row.completion_tokens,
    enqueuedTokens: row.enqueued_tokens ?? 0,
    delivered: row.delivered === 1,
  };
}

export class BatchLedger {
  private readonly database: SqliteDatabase;

  constructor(path: string) {
    this.database = openSqlite(path);
    this.database.pragma('busy_timeout = 10000');
    this.database.pragma('journal_mode = WAL');
    this.database.exec(`
      CREATE TABLE IF NOT EXISTS rubricate_batches (
        local_id TEXT PRIMARY KEY, provider TEXT NOT NULL, endpoint TEXT NOT NULL, model TEXT NOT NULL,
        file_id TEXT, batch_id TEXT, status TEXT NOT NULL, created_at INTEGER NOT NULL,
        request_count INTEGER NOT NULL, completed INTEGER NOT NULL DEFAULT 0, failed INTEGER NOT NULL DEFAULT 0,
        prompt_tokens INTEGER NOT NULL DEFAULT 0, cached_prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,
        delivered INTEGER NOT NULL DEFAULT 0, enqueued_tokens INTEGER NOT NULL DEFAULT 0, role TEXT NOT NULL DEFAULT 'judge');
      CREATE TABLE IF NOT EXISTS rubricate_batch_requests (
        local_id TEXT NOT NULL, custom_id TEXT NOT NULL, PRIMARY KEY (local_id, custom_id));`);
    // Ledgers written before the enqueued-token limit, or before generators sent batches, get the column.
    const columns = this.database.prepare('PRAGMA table_info(rubricate_batches)').all() as Array<{ name: string }>;
    if (!columns.some((column) => column.name === 'enqueued_tokens')) this.database.exec('ALTER TABLE rubricate_batches ADD COLUMN enqueued_tokens INTEGER NOT NULL DEFAULT 0');
    if (!columns.some((column) => column.name === 'role')) this.database.exec("ALTER TABLE rubricate_batches ADD COLUMN role TEXT NOT NULL DEFAULT 'judge'");
  }

  /** Step 1, before any network call: the batch and the requests it will hold. */
  plan(batch: Pick<LedgerBatch, 'localId' | 'provider' | 'endpoint' | 'model'> & { role?: string; enqueuedTokens?: number }, customIds: readonly string[]): void {
    const insertBatch = this.database.prepare(
      'INSERT INTO rubricate_batches (local_id, provider, endpoint, model, role, status, created_at, request_count, enqueued_tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const insertRequest = this.database.prepare('INSERT OR IGNORE INTO rubricate_batch_requests (local_id, custom_id) VALUES (?, ?)');
    this.database.transaction(() => {
      insertBatch.run(batch.localId, batch.provider, batch.endpoint, batch.model, batch.role ?? 'judge', 'planned', Date.now(), customIds.length, batch.enqueuedTokens ?? 0);
      for (const customId of customIds) insertRequest.run(batch.localId, customId);
    });
  }

  uploaded(localId: string, fileId: string): void {
    this.database.prepare("UPDATE rubricate_batches SET file_id = ?, status = 'uploaded' WHERE local_id = ?").run(fileId, localId);
  }

  created(localId: string, batchId: string, status: string): void {
    this.database.prepare('UPDATE rubricate_batches SET batch_id = ?, status = ? WHERE local_id = ?').run(batchId, status, localId);
  }

  update(localId: string, fields: Partial<Pick<LedgerBatch, 'status' | 'completed' | 'failed' | 'promptTokens' | 'cachedPromptTokens' | 'completionTokens' | 'delivered'>>): void {
    const columns: Record<string, string> = {
      status: 'status',
      completed: 'completed',
      failed: 'failed',
      promptTokens: 'prompt_tokens',
      cachedPromptTokens: 'cached_prompt_tokens',
      completionTokens: 'completion_tokens',
      delivered: 'delivered',
    };
    const entries = Object.entries(fields).filter(([, value]) => value !== undefined);
    if (entries.length === 0) return;
    const sql = `UPDATE rubricate_batches SET ${entries.map(([name]) => `${columns[name]} = ?`).join(', ')} WHERE local_id = ?`;
    this.database.prepare(sql).run(...entries.map(([, value]) => (typeof value === 'boolean' ? (value ? 1 : 0) : value)), localId);
  }

  /** Batches not yet delivered, for one provider endpoint, model and role. */
  open(provider: string, endpoint: string, model: string, role = 'judge'): LedgerBatch[] {
    const rows = this.database
      .prepare('SELECT * FROM rubricate_batches WHERE delivered = 0 AND provider = ? AND endpoint = ? AND model = ? AND role = ? ORDER BY created_at')
      .all(provider, endpoint, model, role) as Row[];
    return rows.map(fromRow);
  }

  all(): LedgerBatch[] {
    return (this.database.prepare('SELECT * FROM rubricate_batches ORDER BY created_at').all() as Row[]).map(fromRow);
  }

  get(idOrBatchId: string): LedgerBatch | undefined {
    const row = this.database.prepare('SELECT * FROM rubricate_batches WHERE local_id = ? OR batch_id = ?').get(idOrBatchId, idOrBatchId) as Row | undefined;
    return row ? fromRow(row) : undefined;
  }

  customIds(localId: string): string[] {
    return (this.database.prepare('SELECT custom_id FROM rubricate_batch_requests WHERE local_id = ?').all(localId) as Array<{ custom_id: string }>).map((row) => row.custom_id);
  }

  close(): void {
    if (this.database.open) this.database.close();
  }
}
