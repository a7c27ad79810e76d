/**
 * Durable store of judge replies keyed by the hash of the exact request. It is both the
 * cache across runs and the journal that makes a killed run resumable.
 *
 * Two layers, so that persisting a reply costs an append and not a database commit:
 * every reply is appended at once (synchronously, before its verdicts are used) to this
 * process's journal file beside the database; a batch of replies moves from the journal
 * into SQLite every few hundred milliseconds, and the journal is emptied. A journal left
 * by a killed process is imported the next time the store is opened, so nothing paid for
 * is ever asked again.
 */
import { closeSync, existsSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { homedir, platform } from 'node:os';
import { basename, dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { RubricateError } from '../errors.js';
import type { JudgeReply } from '../judges/types.js';
import { safeParseJson } from '../util/json.js';

export interface ReplyStore {
  get(key: string): JudgeReply | undefined;
  put(key: string, reply: JudgeReply): void;
  close(): void;
}

/** Replies kept in memory, most recently used first out last: a server grading the same items reads them again and again. */
const memoryEntries = 20_000;
/** How long appended replies wait before they are moved into SQLite in one transaction. */
const flushDelayMs = 250;
/** …unless this many are waiting. */
const flushBatchSize = 2048;

export class SqliteReplyStore implements ReplyStore {
  readonly path: string;
  private readonly database: Database.Database;
  private readonly selectStatement: Database.Statement<[string], { reply: string }>;
  private readonly insertStatement: Database.Statement<[string, string, number]>;
  /** Replies in the journal and not yet in SQLite. */
  private readonly pending = new Map<string, string>();
  /** Recently stored or read replies, parsed (bounded; the oldest use is evicted first). */
  private readonly memory = new Map<string, JudgeReply>();
  private readonly journalPath: string | undefined;
  private journal: number | undefined;
  private flushTimer: NodeJS.Timeout | undefined;

  constructor(path: string) {
    this.path = path;
    try {
      if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
      this.database = new Database(path);
      this.database.pragma('journal_mode = WAL');
      // OFF only skips fsync: a killed process loses nothing (the OS has the pages); a power cut could.
      // For a cache that is the right trade: a lost or damaged row just means one call made again.
      this.database.pragma('synchronous = OFF');
      this.database.pragma('busy_timeout = 10000');
      // Reads are on the hot path (one per judge task): a larger page cache than the default 2 MB.
      // (No mmap: mapped pages would count in the process's memory for no gain here.)
      this.database.pragma('cache_size = -16384');
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
    if (path !== ':memory:') {
      this.importAbandonedJournals();
      this.journalPath = `${path}.journal-${process.pid}`;
    }
  }

  get(key: string): JudgeReply | undefined {
    const remembered = this.memory.get(key);
    if (remembered) {
      this.memory.delete(key);
      this.memory.set(key, remembered);
      return remembered;
    }
    const text = this.pending.get(key) ?? this.selectStatement.get(key)?.reply;
    if (text === undefined) return undefined;
    const parsed = safeParseJson(text);
    // A damaged row is treated as absent: the call is simply made again.
    if (!parsed.ok) return undefined;
    this.remember(key, parsed.value as JudgeReply);
    return parsed.value as JudgeReply;
  }

  private remember(key: string, reply: JudgeReply): void {
    this.memory.set(key, reply);
    if (this.memory.size > memoryEntries) this.memory.delete(this.memory.keys().next().value as string);
  }

  /** Persists a reply now (an append to the journal); it reaches SQLite with the next batch. */
  put(key: string, reply: JudgeReply): void {
    const text = JSON.stringify(reply);
    this.pending.set(key, text);
    this.remember(key, reply);
    if (this.journalPath) {
      this.journal ??= openSync(this.journalPath, 'a');
      writeSync(this.journal, `${JSON.stringify(key)}\t${text}\n`);
    }
    if (this.pending.size >= flushBatchSize) this.flush();
    else this.flushTimer ??= setTimeout(() => this.flush(), flushDelayMs).unref();
  }

  /** Moves journaled replies into SQLite in one transaction, then empties the journal. */
  flush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.pending.size === 0 || !this.database.open) return;
    this.insertMany(this.pending);
    this.pending.clear();
    if (this.journal !== undefined) ftruncateSync(this.journal, 0);
  }

  /** Writes many replies in one transaction (bulk loads, benchmarks). */
  putMany(entries: Iterable<[string, JudgeReply]>): void {
    const texts = new Map<string, string>();
    for (const [key, reply] of entries) texts.set(key, JSON.stringify(reply));
    this.insertMany(texts);
  }

  close(): void {
    if (!this.database.open) return;
    this.flush();
    if (this.journal !== undefined) {
      closeSync(this.journal);
      this.journal = undefined;
      rmSync(this.journalPath!, { force: true });
    }
    this.database.close();
  }

  private insertMany(texts: Map<string, string>): void {
    const now = Date.now();
    this.database.transaction(() => {
      for (const [key, text] of texts) this.insertStatement.run(key, text, now);
    })();
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
      if (!Number.isInteger(pid) || pid === process.pid || isAlive(pid)) continue;
      const file = join(directory, name);
      const texts = new Map<string, string>();
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        const tab = line.indexOf('\t');
        if (tab === -1) continue;
        const key = safeParseJson(line.slice(0, tab));
        const reply = safeParseJson(line.slice(tab + 1));
        // The last line of a killed process may be cut short: only whole entries count.
        if (key.ok && typeof key.value === 'string' && reply.ok) texts.set(key.value, line.slice(tab + 1));
      }
      if (texts.size > 0) this.insertMany(texts);
      if (existsSync(file)) rmSync(file, { force: true });
    }
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
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
