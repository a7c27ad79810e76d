/**
 * The one way this project opens a SQLite file: Node's built-in `node:sqlite` where the running
 * Node has it (22.13 and later, 23.4 and later: no flag, no native build), else better-sqlite3 (an
 * optional dependency, for Node 20). Both give the same small interface: `exec`, `pragma`,
 * prepared statements (`run`, `get`, `all`, `iterate` with positional parameters), `transaction`,
 * `close`; and the same errors: a SQLite failure carries `code` `SQLITE_<NAME>` (`SQLITE_BUSY`,
 * `SQLITE_READONLY`…) whichever driver raised it. Rows are data objects; node:sqlite's have no
 * prototype (copying them cost 13% of a cached read), so read their fields, don't print them whole.
 *
 * The driver is chosen on the first opening, not on import, so importing the package's root
 * loads no SQLite at all. `RUBRICATE_SQLITE=better-sqlite3` (or `node:sqlite`) forces one, for the
 * benchmark that compares them and for anyone who needs the other.
 */
import { createRequire } from 'node:module';
import { RubricateError } from '../errors.js';

export type SqliteDriverName = 'node:sqlite' | 'better-sqlite3';

export interface SqliteRunResult {
  changes: number | bigint;
  lastInsertRowid: number | bigint;
}

export interface SqliteStatement<Params extends unknown[] = unknown[], Row = unknown> {
  run(...parameters: Params): SqliteRunResult;
  get(...parameters: Params): Row | undefined;
  all(...parameters: Params): Row[];
  iterate(...parameters: Params): IterableIterator<Row>;
}

export interface SqliteDatabase {
  readonly driver: SqliteDriverName;
  /** False once closed. */
  readonly open: boolean;
  exec(sql: string): void;
  /** Sets a pragma: `pragma('busy_timeout = 25')`. */
  pragma(setting: string): void;
  prepare<Params extends unknown[] = unknown[], Row = unknown>(sql: string): SqliteStatement<Params, Row>;
  /**
   * Runs `body` in one transaction (BEGIN … COMMIT, ROLLBACK when it throws) and returns its value.
   * `immediate` takes the write lock at BEGIN (a read-then-write that must not be overtaken).
   */
  transaction<T>(body: () => T, mode?: 'deferred' | 'immediate'): T;
  close(): void;
}

export interface SqliteOpenOptions {
  readOnly?: boolean;
  /** This driver rather than the process's choice (tests and the benchmark compare them). */
  driver?: SqliteDriverName;
}

// ── node:sqlite (typed here: the project's @types/node is Node 20's, which has no node:sqlite) ──

interface NodeStatementSync {
  run(...parameters: unknown[]): SqliteRunResult;
  get(...parameters: unknown[]): unknown;
  all(...parameters: unknown[]): unknown[];
  iterate(...parameters: unknown[]): IterableIterator<unknown>;
}
interface NodeDatabaseSync {
  exec(sql: string): void;
  prepare(sql: string): NodeStatementSync;
  close(): void;
}
interface NodeSqliteModule {
  DatabaseSync: new (path: string, options?: { readOnly?: boolean }) => NodeDatabaseSync;
}

// ── better-sqlite3 (its types are a dev dependency; the package itself is optional) ──

interface BetterStatement {
  run(...parameters: unknown[]): SqliteRunResult;
  get(...parameters: unknown[]): unknown;
  all(...parameters: unknown[]): unknown[];
  iterate(...parameters: unknown[]): IterableIterator<unknown>;
}
interface BetterDatabase {
  readonly open: boolean;
  exec(sql: string): void;
  pragma(setting: string): unknown;
  prepare(sql: string): BetterStatement;
  transaction<T>(body: () => T): (() => T) & { immediate: () => T };
  close(): void;
}
type BetterConstructor = new (path: string, options?: { readonly?: boolean }) => BetterDatabase;

/** SQLite's primary result codes by number (node:sqlite reports the number, better-sqlite3 the name). */
const primaryCodes: Record<number, string> = {
  1: 'ERROR', 2: 'INTERNAL', 3: 'PERM', 4: 'ABORT', 5: 'BUSY', 6: 'LOCKED', 7: 'NOMEM', 8: 'READONLY', 9: 'INTERRUPT', 10: 'IOERR',
  11: 'CORRUPT', 13: 'FULL', 14: 'CANTOPEN', 15: 'PROTOCOL', 17: 'SCHEMA', 18: 'TOOBIG', 19: 'CONSTRAINT', 20: 'MISMATCH', 21: 'MISUSE', 23: 'AUTH', 26: 'NOTADB',
};

/** Gives a node:sqlite error the code better-sqlite3 would have given it (`SQLITE_BUSY`…). */
function normalizeError(error: unknown): unknown {
  const failure = error as { code?: unknown; errcode?: unknown } | undefined;
  if (failure && typeof failure.errcode === 'number' && failure.code === 'ERR_SQLITE_ERROR') {
    const name = primaryCodes[failure.errcode & 0xff];
    if (name) failure.code = `SQLITE_${name}`;
  }
  return error;
}

function guarded<T>(call: () => T): T {
  try {
    return call();
  } catch (error) {
    throw normalizeError(error);
  }
}

class NodeSqliteStatement<Params extends unknown[], Row> implements SqliteStatement<Params, Row> {
  constructor(private readonly statement: NodeStatementSync) {}
  run(...parameters: Params): SqliteRunResult {
    return guarded(() => this.statement.run(...parameters));
  }
  get(...parameters: Params): Row | undefined {
    return guarded(() => this.statement.get(...parameters)) as Row | undefined;
  }
  all(...parameters: Params): Row[] {
    return guarded(() => this.statement.all(...parameters)) as Row[];
  }
  *iterate(...parameters: Params): IterableIterator<Row> {
    const rows = guarded(() => this.statement.iterate(...parameters));
    for (;;) {
      const next = guarded(() => rows.next());
      if (next.done) return;
      yield next.value as Row;
    }
  }
}

class NodeSqliteDatabase implements SqliteDatabase {
  readonly driver = 'node:sqlite';
  private database: NodeDatabaseSync | undefined;
  private depth = 0;
  constructor(module: NodeSqliteModule, path: string, options: SqliteOpenOptions) {
    this.database = guarded(() => new module.DatabaseSync(path, { readOnly: options.readOnly ?? false }));
  }
  get open(): boolean {
    return this.database !== undefined;
  }
  private get handle(): NodeDatabaseSync {
    if (!this.database) throw new TypeError('The database connection is not open');
    return this.database;
  }
  exec(sql: string): void {
    guarded(() => this.handle.exec(sql));
  }
  pragma(setting: string): void {
    this.exec(`PRAGMA ${setting}`);
  }
  prepare<Params extends unknown[] = unknown[], Row = unknown>(sql: string): SqliteStatement<Params, Row> {
    return new NodeSqliteStatement<Params, Row>(guarded(() => this.handle.prepare(sql)));
  }
  /** As better-sqlite3 does it: a transaction inside a transaction is a savepoint. */
  transaction<T>(body: () => T, mode: 'deferred' | 'immediate' = 'deferred'): T {
    const savepoint = `rubricate_${this.depth}`;
    this.exec(this.depth === 0 ? (mode === 'immediate' ? 'BEGIN IMMEDIATE' : 'BEGIN') : `SAVEPOINT ${savepoint}`);
    this.depth += 1;
    try {
      const value = body();
      this.exec(this.depth === 1 ? 'COMMIT' : `RELEASE ${savepoint}`);
      return value;
    } catch (error) {
      try {
        this.exec(this.depth === 1 ? 'ROLLBACK' : `ROLLBACK TO ${savepoint}; RELEASE ${savepoint}`);
      } catch {
        // SQLite may have rolled back already (a failed COMMIT, some I/O errors): the first error is the one to report.
      }
      throw error;
    } finally {
      this.depth -= 1;
    }
  }
  close(): void {
    const database = this.database;
    this.database = undefined;
    database?.close();
  }
}

class BetterSqliteDatabase implements SqliteDatabase {
  readonly driver = 'better-sqlite3';
  private readonly database: BetterDatabase;
  constructor(Database: BetterConstructor, path: string, options: SqliteOpenOptions) {
    this.database = new Database(path, { readonly: options.readOnly ?? false });
  }
  get open(): boolean {
    return this.database.open;
  }
  exec(sql: string): void {
    this.database.exec(sql);
  }
  pragma(setting: string): void {
    this.database.pragma(setting);
  }
  prepare<Params extends unknown[] = unknown[], Row = unknown>(sql: string): SqliteStatement<Params, Row> {
    return this.database.prepare(sql) as SqliteStatement<Params, Row>;
  }
  transaction<T>(body: () => T, mode: 'deferred' | 'immediate' = 'deferred'): T {
    const run = this.database.transaction(body);
    return mode === 'immediate' ? run.immediate() : run();
  }
  close(): void {
    this.database.close();
  }
}

// ── choosing the driver ──

const requireFromHere = createRequire(import.meta.url);
/** The version package.json pins, named in the message that asks for it. */
const betterSqliteVersion = '12.11.1';

/** node:sqlite when this Node has it; Node 22 flags it experimental, a warning the CLI's users need not see. */
function loadNodeSqlite(): NodeSqliteModule | undefined {
  const getBuiltinModule = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  if (!getBuiltinModule) return undefined;
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    if (/SQLite/.test(typeof warning === 'string' ? warning : warning.message)) return;
    (emitWarning as (...parameters: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    return getBuiltinModule.call(process, 'node:sqlite') as NodeSqliteModule | undefined;
  } catch {
    return undefined;
  } finally {
    process.emitWarning = emitWarning;
  }
}

function loadBetterSqlite(): BetterConstructor {
  try {
    return requireFromHere('better-sqlite3') as BetterConstructor;
  } catch (error) {
    throw new RubricateError(
      'STORE_UNAVAILABLE',
      `no SQLite driver: Node ${process.version} has no node:sqlite (Node 22.13 and later have it built in), and the optional better-sqlite3 could not be loaded ` +
        `(${(error as Error).message.split('\n')[0]}). Use Node 22 or 24, or on Node 20 add it: npm install better-sqlite3@${betterSqliteVersion} (the light install, --omit=optional, leaves it out)`,
      { field: 'cache' },
      { cause: error },
    );
  }
}

let nodeSqlite: NodeSqliteModule | null | undefined;
let betterSqlite: BetterConstructor | undefined;

function openWith(driver: SqliteDriverName, path: string, options: SqliteOpenOptions): SqliteDatabase {
  if (driver === 'better-sqlite3') return new BetterSqliteDatabase((betterSqlite ??= loadBetterSqlite()), path, options);
  nodeSqlite ??= loadNodeSqlite() ?? null;
  if (!nodeSqlite) throw new RubricateError('CONFIG_INVALID', `node:sqlite was asked for, and Node ${process.version} does not have it (Node 22.13 or later has it)`, { field: 'RUBRICATE_SQLITE' });
  return new NodeSqliteDatabase(nodeSqlite, path, options);
}

/** The drivers this process can use, preferred first (for tests and the benchmark). */
export function availableSqliteDrivers(): SqliteDriverName[] {
  nodeSqlite ??= loadNodeSqlite() ?? null;
  const available: SqliteDriverName[] = nodeSqlite ? ['node:sqlite'] : [];
  try {
    betterSqlite ??= loadBetterSqlite();
    // Loading is not enough: a binary built for another Node's ABI fails only when a database opens.
    new BetterSqliteDatabase(betterSqlite, ':memory:', {}).close();
    available.push('better-sqlite3');
  } catch {
    // not installed, or built for another Node
  }
  return available;
}

function defaultDriver(environment: NodeJS.ProcessEnv): SqliteDriverName {
  const wanted = environment.RUBRICATE_SQLITE;
  if (wanted === 'node:sqlite' || wanted === 'better-sqlite3') return wanted;
  if (wanted !== undefined && wanted !== '') {
    throw new RubricateError('CONFIG_INVALID', `RUBRICATE_SQLITE is ${JSON.stringify(wanted)}: use node:sqlite or better-sqlite3`, { field: 'RUBRICATE_SQLITE' });
  }
  nodeSqlite ??= loadNodeSqlite() ?? null;
  return nodeSqlite ? 'node:sqlite' : 'better-sqlite3';
}

let chosen: SqliteDriverName | undefined;

/** Opens (creating it unless read-only) the SQLite file at `path`, or `:memory:`, with the driver chosen for this process or the one named. */
export function openSqlite(path: string, options: SqliteOpenOptions = {}): SqliteDatabase {
  return openWith(options.driver ?? (chosen ??= defaultDriver(process.env)), path, options);
}
