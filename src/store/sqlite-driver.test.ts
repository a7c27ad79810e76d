import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { test } from '../testing/vitest-fixtures.js';
import { availableSqliteDrivers, openSqlite } from './sqlite-driver.js';

const nodeMajor = Number(process.versions.node.split('.')[0]);
// better-sqlite3 12.11.1 built for Node 24 can abort the process as it exits (a statement destroyed
// after Node's environment, seen in bench/sqlite-drivers.ts); rubricate never uses it there, nor does this test.
const drivers = availableSqliteDrivers().filter((driver) => driver !== 'better-sqlite3' || nodeMajor < 24);

describe('SQLite drivers', () => {
  test('this Node has a driver, node:sqlite first where it exists', () => {
    const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
    const hasBuiltin = major > 22 || (major === 22 && minor >= 13);
    expect(drivers[0]).toBe(hasBuiltin ? 'node:sqlite' : 'better-sqlite3');
    const database = openSqlite(':memory:');
    expect(database.driver).toBe(process.env.RUBRICATE_SQLITE || drivers[0]);
    database.close();
  });

  describe.each(drivers)('%s', (driver) => {
    test('statements run, get, all and iterate with positional parameters', ({ tempDir }) => {
      const database = openSqlite(join(tempDir, 'a.sqlite'), { driver });
      expect(database.driver).toBe(driver);
      database.pragma('journal_mode = WAL');
      database.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)');
      const insert = database.prepare<[string, number]>('INSERT INTO t (k, v) VALUES (?, ?)');
      expect(insert.run('a', 1).changes).toBe(1);
      insert.run('b', 2);
      const one = database.prepare<[string], { v: number }>('SELECT v FROM t WHERE k = ?');
      expect(one.get('b')).toEqual({ v: 2 });
      expect(one.get('missing')).toBeUndefined();
      expect(database.prepare<[], { k: string }>('SELECT k FROM t ORDER BY k').all()).toEqual([{ k: 'a' }, { k: 'b' }]);
      expect([...database.prepare<[], { v: number }>('SELECT v FROM t ORDER BY v').iterate()].map((row) => row.v)).toEqual([1, 2]);
      database.close();
      expect(database.open).toBe(false);
    });

    test('a transaction commits as one, rolls back whole when its body throws, and nests as a savepoint', ({ tempDir }) => {
      const database = openSqlite(join(tempDir, 'b.sqlite'), { driver });
      database.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
      const insert = database.prepare<[string]>('INSERT INTO t (k) VALUES (?)');
      const count = () => database.prepare<[], { n: number }>('SELECT count(*) AS n FROM t').get()!.n;
      expect(database.transaction(() => (insert.run('a'), insert.run('b'), 'done'), 'immediate')).toBe('done');
      expect(() =>
        database.transaction(() => {
          insert.run('c');
          throw new Error('body failed');
        }),
      ).toThrow('body failed');
      expect(count()).toBe(2);
      database.transaction(() => {
        insert.run('d');
        expect(() => database.transaction(() => insert.run('a'))).toThrow(/UNIQUE/);
      });
      expect(count()).toBe(3);
      database.close();
    });

    test('a lock held elsewhere fails with SQLITE_BUSY; a read-only opening refuses writes with SQLITE_READONLY', ({ tempDir }) => {
      const path = join(tempDir, 'c.sqlite');
      const holder = openSqlite(path, { driver });
      holder.pragma('journal_mode = WAL');
      holder.exec('CREATE TABLE t (k TEXT)');
      holder.exec('BEGIN EXCLUSIVE');
      holder.prepare('INSERT INTO t (k) VALUES (?)').run('held');
      const other = openSqlite(path, { driver });
      other.pragma('busy_timeout = 0');
      expect(() => other.prepare('INSERT INTO t (k) VALUES (?)').run('blocked')).toThrow(expect.objectContaining({ code: expect.stringMatching(/^SQLITE_BUSY/) }));
      holder.exec('COMMIT');
      other.close();
      holder.close();
      const reader = openSqlite(path, { driver, readOnly: true });
      expect(reader.prepare<[], { k: string }>('SELECT k FROM t').all()).toEqual([{ k: 'held' }]);
      expect(() => reader.exec("INSERT INTO t (k) VALUES ('no')")).toThrow(expect.objectContaining({ code: expect.stringMatching(/^SQLITE_READONLY/) }));
      reader.close();
    });
  });
});

test('the message that asks for better-sqlite3 names the version package.json pins', () => {
  const pinned = (JSON.parse(readFileSync('package.json', 'utf8')) as { optionalDependencies: Record<string, string> }).optionalDependencies['better-sqlite3'];
  expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
  expect(readFileSync('src/store/sqlite-driver.ts', 'utf8')).toContain(`const betterSqliteVersion = '${pinned}';`);
});

test('opening a database prints nothing: Node 22 flags node:sqlite experimental, a warning the CLI does not pass on', () => {
  const script = "const { openSqlite } = await import('./src/store/sqlite-driver.ts'); const database = openSqlite(':memory:'); console.log(database.driver); database.close();";
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
  expect(child.status, child.stderr).toBe(0);
  expect(child.stdout.trim()).toBe(drivers[0]);
  expect(child.stderr).toBe('');
});
