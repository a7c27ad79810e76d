/**
 * The reply store's hot path on each SQLite driver this Node can load (node:sqlite, better-sqlite3):
 * a batch of replies written in one transaction (what the journal's flush does), then each read
 * back by a fresh store (a prepared SELECT and the reply's JSON parse: one per judge task on a
 * rerun), then the same SELECTs alone. Each driver runs in a child process of its own
 * (RUBRICATE_SQLITE), since a process keeps the driver it chose. Figures per operation, in wall
 * and in this process's CPU time (steadier when other work shares the cores).
 * Run: `npx tsx bench/sqlite-drivers.ts [replies]`, or `npm run bench -- sqlite-drivers`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JudgeReply } from '../src/judges/types.js';
import { SqliteReplyStore } from '../src/store/sqlite.js';
import { availableSqliteDrivers, openSqlite } from '../src/store/sqlite-driver.js';

interface Timing {
  wallUs: number;
  cpuUs: number;
}

export interface SqliteDriverRow {
  driver: string;
  node: string;
  replies: number;
  /** Per reply, in microseconds: the batched write, the store's cold read, the bare SELECT (absent when it aborted first). */
  writeUs?: Timing;
  readUs?: Timing;
  selectUs?: Timing;
  /** Set when the process aborted (better-sqlite3 12.11.1 on Node 24 does, now and then). */
  aborted?: string;
}

function timed(count: number, body: () => void): Timing {
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  body();
  const wall = Number(process.hrtime.bigint() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { wallUs: Number((wall / count).toFixed(2)), cpuUs: Number(((used.user + used.system) / count).toFixed(2)) };
}

function reply(index: number): JudgeReply {
  return {
    text: JSON.stringify({ criteria: [{ id: `c${index % 7}`, explanation: `The response ${index} mentions rest and fluids.`, criteria_met: index % 2 === 0 }] }),
    usage: { inputTokens: 900 + (index % 50), outputTokens: 40, cachedInputTokens: 512 },
  };
}

/** One driver, in this process. */
function measure(replies: number): SqliteDriverRow {
  const directory = mkdtempSync(join(tmpdir(), 'rubricate-sqlite-bench-'));
  try {
    const path = join(directory, 'cache.sqlite');
    const keys = Array.from({ length: replies }, (_, index) => `key-${index.toString(16).padStart(8, '0')}`);
    const writer = new SqliteReplyStore(path);
    const probe = openSqlite(':memory:');
    const driver = probe.driver;
    probe.close();
    const writeUs = timed(replies, () => writer.putMany(keys.map((key, index) => [key, reply(index)])));
    writer.close();
    const reader = new SqliteReplyStore(path);
    let found = 0;
    const readUs = timed(replies, () => {
      for (const key of keys) if (reader.get(key)) found += 1;
    });
    reader.close();
    if (found !== replies) throw new Error(`read back ${found} of ${replies} replies`);
    const database = openSqlite(path, { readOnly: true });
    const select = database.prepare<[string], { reply: string }>('SELECT reply, created_at FROM replies WHERE key = ?');
    const selectUs = timed(replies, () => {
      for (const key of keys) select.get(key);
    });
    database.close();
    return { driver, node: process.version, replies, writeUs, readUs, selectUs };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/** Every driver this Node has, each in a child process. */
export function runSqliteDriversBenchmark(replies = 20_000): SqliteDriverRow[] {
  const self = fileURLToPath(import.meta.url);
  return availableSqliteDrivers().map((driver) => {
    try {
      const output = execFileSync(process.execPath, ['--import', 'tsx', self, '--child', String(replies)], { env: { ...process.env, RUBRICATE_SQLITE: driver }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      return JSON.parse(output) as SqliteDriverRow;
    } catch (error) {
      // better-sqlite3 12.11.1 built for Node 24 aborts the process now and then (an assertion as a
      // statement is destroyed): that is part of the result, with the figures when they came first.
      const { stdout, signal, stderr } = error as { stdout?: string; signal?: string; stderr?: string };
      if (!signal) throw error;
      if (!stdout) return { driver, node: process.version, replies, aborted: `${signal}: ${stderr?.trim().split('\n')[0] ?? ''}` };
      return { ...(JSON.parse(stdout) as SqliteDriverRow), aborted: `${signal} as it exited` };
    }
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const child = process.argv.includes('--child');
  const replies = Number(process.argv.filter((argument) => /^\d+$/.test(argument))[0] ?? 20_000);
  // Written synchronously: the figures reach the parent even when the process aborts as it exits.
  if (child) writeSync(1, JSON.stringify(measure(replies)));
  else {
    const rows = runSqliteDriversBenchmark(replies);
    for (const row of rows) {
      const figures =
        row.writeUs && row.readUs && row.selectUs
          ? `µs per reply (wall / CPU): write ${row.writeUs.wallUs} / ${row.writeUs.cpuUs}, store read ${row.readUs.wallUs} / ${row.readUs.cpuUs}, SELECT ${row.selectUs.wallUs} / ${row.selectUs.cpuUs}`
          : 'no figures';
      process.stdout.write(`${row.driver.padEnd(15)} ${row.node}  ${row.replies} replies  ${figures}${row.aborted ? `  (aborted: ${row.aborted})` : ''}\n`);
    }
  }
}
