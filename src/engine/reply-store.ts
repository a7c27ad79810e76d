/**
 * Durable store of judge replies keyed by the hash of the exact request. It is both the
 * cache across runs and the journal that makes a killed run resumable: a reply is written
 * in the event-loop turn it was read into verdicts, so nothing paid for is asked again.
 */
import { mkdirSync } from 'node:fs';
import { homedir, platform } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { RubricateError } from '../errors.js';
import type { JudgeReply } from '../judges/types.js';
import { safeParseJson } from '../util/json.js';

export interface ReplyStore {
  get(key: string): JudgeReply | undefined;
  put(key: string, reply: JudgeReply): void;
  close(): void;
}

export class SqliteReplyStore implements ReplyStore {
  readonly path: string;
  private readonly database: Database.Database;
  private readonly selectStatement: Database.Statement<[string], { reply: string }>;
  private readonly insertStatement: Database.Statement<[string, string, number]>;
  /** Replies waiting for the end of the current event-loop turn, written then in one transaction. */
  private readonly pending = new Map<string, string>();
  private flushScheduled = false;

  constructor(path: string) {
    this.path = path;
    try {
      if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
      this.database = new Database(path);
      // WAL + NORMAL: each write survives a killed process without an fsync per verdict.
      this.database.pragma('journal_mode = WAL');
      // OFF only skips fsync: a killed process loses nothing (the OS has the pages); a power cut could.
      // For a cache that is the right trade: a lost or damaged row just means one call made again.
      this.database.pragma('synchronous = OFF');
      this.database.pragma('busy_timeout = 10000');
      this.database.exec(`CREATE TABLE IF NOT EXISTS replies (
        key TEXT PRIMARY KEY,
        reply TEXT NOT NULL,
        created_at INTEGER NOT NULL
      ) WITHOUT ROWID`);
    } catch (error) {
      throw new RubricateError('CONFIG_INVALID', `cannot open the cache at ${path}: ${(error as Error).message}`, { field: 'cache' }, { cause: error });
    }
    this.selectStatement = this.database.prepare('SELECT reply FROM replies WHERE key = ?');
    this.insertStatement = this.database.prepare('INSERT OR REPLACE INTO replies (key, reply, created_at) VALUES (?, ?, ?)');
  }

  get(key: string): JudgeReply | undefined {
    const text = this.pending.get(key) ?? this.selectStatement.get(key)?.reply;
    if (text === undefined) return undefined;
    const parsed = safeParseJson(text);
    // A damaged row is treated as absent: the call is simply made again.
    return parsed.ok ? (parsed.value as JudgeReply) : undefined;
  }

  /**
   * Stores a reply. Writes are grouped per event-loop turn: one transaction for all the
   * replies that arrived in the same turn, committed before any other I/O is handled, so a
   * killed process loses at most the replies of the turn it died in.
   */
  put(key: string, reply: JudgeReply): void {
    this.pending.set(key, JSON.stringify(reply));
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Writes pending replies now. */
  flush(): void {
    this.flushScheduled = false;
    if (this.pending.size === 0 || !this.database.open) return;
    const now = Date.now();
    this.database.transaction(() => {
      for (const [key, text] of this.pending) this.insertStatement.run(key, text, now);
    })();
    this.pending.clear();
  }

  /** Writes many replies in one transaction (bulk loads, benchmarks). */
  putMany(entries: Iterable<[string, JudgeReply]>): void {
    const now = Date.now();
    this.database.transaction(() => {
      for (const [key, reply] of entries) this.insertStatement.run(key, JSON.stringify(reply), now);
    })();
  }

  close(): void {
    if (!this.database.open) return;
    this.flush();
    this.database.close();
  }
}

/** The per-user cache location (XDG on Linux, Library/Caches on macOS, LOCALAPPDATA on Windows). */
export function defaultCacheDirectory(environment: NodeJS.ProcessEnv = process.env): string {
  if (environment.RUBRICATE_CACHE_DIR) return environment.RUBRICATE_CACHE_DIR;
  if (platform() === 'darwin') return join(homedir(), 'Library', 'Caches', 'rubricate');
  if (platform() === 'win32') return join(environment.LOCALAPPDATA ?? join(homedir(), 'AppData', 'Local'), 'rubricate', 'cache');
  return join(environment.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'rubricate');
}

export function defaultCachePath(environment: NodeJS.ProcessEnv = process.env): string {
  return join(defaultCacheDirectory(environment), 'replies.sqlite');
}
