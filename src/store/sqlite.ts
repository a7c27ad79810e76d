/**
 * The embedded reply store: SQLite, one file per user (or per run with --no-cache).
 *
 * Two layers, so that persisting a reply costs an append and not a database commit:
 * every reply is appended at once (synchronously, before its verdicts are used) to this
 * process's journal file beside the database; a batch of replies moves from the journal
 * into SQLite every few hundred milliseconds, and the journal is emptied. A journal left
 * by a killed process is imported the next time the store is opened, so nothing paid for
 * is ever asked again.
 *
 * Contention: another process may hold the database's write lock for a long time. SQLite's
 * own busy wait blocks the event loop, so it is kept short; beyond it a batch waits with
 * backoff on a timer (its replies are safe in the journal meanwhile) and a read waits with
 * backoff up to a bound, then fails that one call with STORE_BUSY. Nothing here throws from
 * a timer, and closing a busy store keeps its journal for the next opening instead of dying.
 */
import { accessSync, closeSync, constants, existsSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { homedir, platform } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { RubricateError } from '../errors.js';
import type { JudgeReply } from '../judges/types.js';
import { safeParseJson } from '../util/json.js';
import { sleep } from '../util/sleep.js';
import { RecentReplies } from './memory.js';
import { readStoredReply } from './reply-shape.js';
import { openSqlite, type SqliteDatabase, type SqliteStatement } from './sqlite-driver.js';
import type { ReplyStoreOptions, TransferableReplyStore } from './types.js';
import { isProcessAlive } from '../util/process-alive.js';

export interface SqliteReplyStoreOptions extends ReplyStoreOptions {
  /**
   * How many replies are kept parsed in memory besides SQLite (default 20,000, for `serve`'s
   * repeated reads). A batch run reads each reply about once: a small memory spares it the GC work.
   */
  recentReplies?: number;
  /** How long a read waits for a locked database before its call fails with STORE_BUSY (default 10 s). */
  busyBoundMs?: number;
  /** How long closing waits to move the last batch into a locked database before keeping it in the journal (default 10 s). */
  closeBusyBoundMs?: number;
  /** Told about problems that cost nothing now (a batch kept in the journal); the CLI prints them. */
  onWarning?: (message: string) => void;
}

/** How long appended replies wait before they are moved into SQLite in one transaction. */
const flushDelayMs = 250;
/** …unless this many are waiting. */
const flushBatchSize = 2048;
/** SQLite's own (blocking) wait for a lock: short, the rest of the waiting is asynchronous. */
const blockingBusyMs = 25;
const maxBackoffMs = 2_000;

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/**
 * Judge replies kept in a SQLite file: the cache that lets a run resume without asking again.
 *
 * @example
 * ```ts
 * import { Grader, createJudge } from 'rubricate';
 * import { SqliteReplyStore, defaultCachePath } from 'rubricate/store';
 * const store = new SqliteReplyStore(defaultCachePath());
 * const grader = new Grader({ judge: await createJudge({ model: 'openai:gpt-4.1-mini' }), store });
 * await store.close();
 * ```
 */
export class SqliteReplyStore implements TransferableReplyStore {
  readonly path: string;
  private readonly database: SqliteDatabase;
  private readonly selectStatement: SqliteStatement<[string], { reply: string; created_at: number }>;
  private readonly insertStatement: SqliteStatement<[string, string, number]>;
  /** Replies in the journal and not yet in SQLite. */
  private readonly pending = new Map<string, string>();
  private readonly memory: RecentReplies;
  private readonly journalPath: string | undefined;
  private readonly ttlMs: number | undefined;
  private readonly busyBoundMs: number;
  private readonly closeBusyBoundMs: number;
  private readonly onWarning: (message: string) => void;
  private journal: number | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private flushBackoffMs = 0;
  private flushWarned = false;
  /** Times a batch found the database locked by another process and waited (for tests and metrics). */
  busyWaits = 0;

  constructor(path: string, options: SqliteReplyStoreOptions = {}) {
    this.path = path;
    this.memory = new RecentReplies(options.recentReplies);
    this.ttlMs = options.ttlMs;
    this.busyBoundMs = options.busyBoundMs ?? 10_000;
    this.closeBusyBoundMs = options.closeBusyBoundMs ?? 10_000;
    this.onWarning = options.onWarning ?? (() => {});
    try {
      if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
      this.database = openSqlite(path);
      this.database.pragma(`busy_timeout = ${this.busyBoundMs}`);
      this.database.pragma('journal_mode = WAL');
      // OFF only skips fsync: a killed process loses nothing (the OS has the pages); a power cut could.
      // For a cache that is the right trade: a lost or damaged row just means one call made again.
      this.database.pragma('synchronous = OFF');
      // Reads are on the hot path (one per judge task): a larger page cache than the default 2 MB.
      // (No mmap: mapped pages would count in the process's memory for no gain here.)
      this.database.pragma('cache_size = -16384');
      this.database.exec(`CREATE TABLE IF NOT EXISTS replies (
        key TEXT PRIMARY KEY,
        reply TEXT NOT NULL,
        created_at INTEGER NOT NULL
      ) WITHOUT ROWID`);
    } catch (error) {
      if (error instanceof RubricateError) throw error;
      const reason = unwritableReason(path) ?? (error as Error).message;
      throw new RubricateError('CONFIG_INVALID', `cannot open the cache at ${path}: ${reason}. Make it writable, pass --cache FILE for another one, or --no-cache`, { field: 'cache' }, { cause: error });
    }
    this.selectStatement = this.database.prepare<[string], { reply: string; created_at: number }>('SELECT reply, created_at FROM replies WHERE key = ?');
    this.insertStatement = this.database.prepare<[string, string, number]>('INSERT OR REPLACE INTO replies (key, reply, created_at) VALUES (?, ?, ?)');
    this.assertWritable();
    this.database.pragma(`busy_timeout = ${blockingBusyMs}`);
    if (path !== ':memory:') {
      this.importAbandonedJournals();
      this.journalPath = `${path}.journal-${process.pid}`;
    }
  }

  /** A cache we could read but never write would end a finished run with lost replies: refuse it up front. */
  private assertWritable(): void {
    try {
      this.database.transaction(() => {
        this.insertStatement.run('\u0000rubricate-write-probe', '{}', 0);
        throw new ProbeDone();
      });
    } catch (error) {
      if (error instanceof ProbeDone || isBusy(error)) return;
      this.database.close();
      const code = (error as { code?: string }).code ?? '';
      const reason = code.startsWith('SQLITE_READONLY') ? 'it is read-only for this user' : (error as Error).message;
      throw new RubricateError('CONFIG_INVALID', `cannot write to the cache at ${this.path}: ${reason}. Make it writable, pass --cache FILE for another one, or --no-cache`, { field: 'cache' }, { cause: error });
    }
  }

  get(key: string): JudgeReply | undefined | Promise<JudgeReply | undefined> {
    const remembered = this.memory.get(key);
    if (remembered) return remembered;
    const pending = this.pending.get(key);
    if (pending !== undefined) return this.accept(key, pending, Date.now());
    try {
      const row = this.selectStatement.get(key);
      return row ? this.accept(key, row.reply, row.created_at) : undefined;
    } catch (error) {
      if (!isBusy(error)) throw storeError(this.path, error);
      return this.getWhenFree(key);
    }
  }

  private async getWhenFree(key: string): Promise<JudgeReply | undefined> {
    const deadline = Date.now() + this.busyBoundMs;
    for (let delay = 10; ; delay = Math.min(maxBackoffMs, delay * 2)) {
      await sleep(Math.min(delay, Math.max(0, deadline - Date.now())));
      try {
        const row = this.selectStatement.get(key);
        return row ? this.accept(key, row.reply, row.created_at) : undefined;
      } catch (error) {
        if (!isBusy(error)) throw storeError(this.path, error);
        if (Date.now() >= deadline) {
          throw new RubricateError(
            'STORE_BUSY',
            `the cache at ${this.path} stayed locked by another process for ${Math.round(this.busyBoundMs / 1000)} s, so this call's stored reply could not be read`,
            { field: 'cache' },
          );
        }
      }
    }
  }

  /** A damaged or expired entry is treated as absent: the call is simply made again. */
  private accept(key: string, text: string, createdAt: number): JudgeReply | undefined {
    const expiresAt = this.ttlMs === undefined ? Number.POSITIVE_INFINITY : createdAt + this.ttlMs;
    if (expiresAt <= Date.now()) return undefined;
    const reply = readStoredReply(text);
    if (reply) this.memory.set(key, reply, expiresAt);
    return reply;
  }

  /** Persists a reply now (an append to the journal); it reaches SQLite with the next batch. */
  put(key: string, reply: JudgeReply): void {
    const text = JSON.stringify(reply);
    if (this.journalPath) {
      this.journal ??= openSync(this.journalPath, 'a');
      writeSync(this.journal, `${JSON.stringify(key)}\t${text}\n`);
    }
    this.pending.set(key, text);
    this.memory.set(key, reply, this.ttlMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + this.ttlMs);
    if (this.pending.size >= flushBatchSize && this.flushBackoffMs === 0) this.flushInBackground();
    else this.flushTimer ??= setTimeout(() => this.flushInBackground(), flushDelayMs).unref();
  }

  /** Moves journaled replies into SQLite in one transaction, then empties the journal (throws when it cannot). */
  flush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.pending.size === 0 || !this.database.open) return;
    this.insertMany(this.pending);
    this.pending.clear();
    if (this.journal !== undefined) ftruncateSync(this.journal, 0);
  }

  /** The timer's flush: a locked database is waited for with backoff, never thrown from a timer. */
  private flushInBackground(): void {
    try {
      this.flush();
      this.flushBackoffMs = 0;
    } catch (error) {
      this.flushBackoffMs = Math.min(maxBackoffMs, Math.max(flushDelayMs, this.flushBackoffMs * 2));
      if (isBusy(error)) this.busyWaits += 1;
      if (!isBusy(error) && !this.flushWarned) {
        this.flushWarned = true;
        this.onWarning(`cannot write to the cache at ${this.path} (${(error as Error).message}); replies are kept in its journal meanwhile`);
      }
      this.flushTimer = setTimeout(() => this.flushInBackground(), this.flushBackoffMs).unref();
    }
  }

  /** Writes many replies in one transaction (bulk loads, imports, benchmarks). */
  putMany(entries: Iterable<[string, JudgeReply]>): void {
    const texts = new Map<string, string>();
    for (const [key, reply] of entries) texts.set(key, JSON.stringify(reply));
    this.insertMany(texts);
  }

  async *entries(): AsyncIterable<[string, JudgeReply]> {
    this.flush();
    const rows = this.database.prepare<[], { key: string; reply: string; created_at: number }>('SELECT key, reply, created_at FROM replies').iterate();
    for (const row of rows) {
      if (row.key.startsWith('\u0000')) continue;
      const reply = this.accept(row.key, row.reply, row.created_at);
      if (reply) yield [row.key, reply];
    }
  }

  close(): void {
    if (!this.database.open) return;
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    let kept = false;
    try {
      this.database.pragma(`busy_timeout = ${this.closeBusyBoundMs}`);
      this.flush();
    } catch (error) {
      kept = true;
      this.onWarning(
        `${this.pending.size} replies could not be moved into the cache at ${this.path} (${(error as Error).message}); ` +
          `they are kept in ${this.journalPath ?? 'memory'} and will be imported the next time the cache is opened`,
      );
    }
    if (this.journal !== undefined) {
      closeSync(this.journal);
      this.journal = undefined;
      if (!kept) rmSync(this.journalPath!, { force: true });
    }
    this.database.close();
  }

  private insertMany(texts: Map<string, string>): void {
    const now = Date.now();
    this.database.transaction(() => {
      for (const [key, text] of texts) this.insertStatement.run(key, text, now);
    });
  }

  /** Imports journals whose process is gone (a killed run), so their replies are reused. */
  private importAbandonedJournals(): void {
    const directory = dirname(this.path);
    const prefix = `${basename(this.path)}.journal-`;
    let names: string[];
    try {
      names = readdirSync(directory).filter((name) => name.startsWith(prefix));
    } catch {
      return;
    }
    for (const name of names) {
      const pid = Number(name.slice(prefix.length));
      // Our own journal belongs to another store open in this process; live processes keep theirs.
      if (!Number.isInteger(pid) || pid === process.pid || isProcessAlive(pid)) continue;
      const file = join(directory, name);
      const texts = new Map<string, string>();
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        const tab = line.indexOf('\t');
        if (tab === -1) continue;
        const key = safeParseJson(line.slice(0, tab));
        // The last line of a killed process may be cut short: only whole entries count.
        if (key.ok && typeof key.value === 'string' && readStoredReply(line.slice(tab + 1))) texts.set(key.value, line.slice(tab + 1));
      }
      try {
        if (texts.size > 0) this.insertMany(texts);
      } catch (error) {
        // Locked now: the journal stays for a later opening.
        if (isBusy(error)) continue;
        throw storeError(this.path, error);
      }
      if (existsSync(file)) rmSync(file, { force: true });
    }
  }
}

class ProbeDone extends Error {}

function storeError(path: string, error: unknown): RubricateError {
  return new RubricateError('STORE_UNAVAILABLE', `the cache at ${path} failed: ${(error as Error).message}`, { field: 'cache' }, { cause: error });
}

/** The per-user cache location (XDG on Linux, Library/Caches on macOS, LOCALAPPDATA on Windows). */
export function defaultCacheDirectory(environment: NodeJS.ProcessEnv = process.env): string {
  if (environment.RUBRICATE_CACHE_DIR) return environment.RUBRICATE_CACHE_DIR;
  if (platform() === 'darwin') return join(homedir(), 'Library', 'Caches', 'rubricate');
  if (platform() === 'win32') return join(environment.LOCALAPPDATA ?? join(homedir(), 'AppData', 'Local'), 'rubricate', 'cache');
  return join(environment.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'rubricate');
}

/**
 * Where replies are kept by default (the user cache folder).
 *
 * @example
 * ```ts
 * import { defaultCachePath } from 'rubricate/store';
 * console.log(`replies are kept in ${defaultCachePath()}`);
 * ```
 */
export function defaultCachePath(environment: NodeJS.ProcessEnv = process.env): string {
  return join(defaultCacheDirectory(environment), 'replies.sqlite');
}

/** Why SQLite could not open `path` for writing, where the file system says so (SQLite's own message is only "unable to open database file"). */
function unwritableReason(path: string): string | undefined {
  if (path === ':memory:') return undefined;
  for (const target of [path, dirname(path)]) {
    try {
      accessSync(target, constants.W_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EROFS') return 'it is on a read-only file system';
      if (code === 'EACCES' || code === 'EPERM') return 'it is read-only for this user';
    }
  }
  return undefined;
}
