/**
 * A real Redis for tests: Debian's `redis-server`, started on a free loopback port with a
 * temporary directory (append-only file on, so a restart keeps what was written), stopped
 * at the end (`redisTest` in redis-fixture.ts is the vitest fixture). Without redis-server
 * installed it fails with a message saying how to install it (CI installs it).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RedisServer {
  url: string;
  port: number;
  directory: string;
  /** Stops the server (SIGTERM: it writes its append-only file first). */
  stop(): Promise<void>;
  /** Starts it again on the same port and directory. */
  start(): Promise<void>;
  readonly running: boolean;
}

export function redisServerAvailable(): boolean {
  return spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).status === 0;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function startRedisServer(): Promise<RedisServer> {
  if (!redisServerAvailable()) throw new Error('redis-server is not installed (Debian: apt-get install redis-server); the store, queue and fleet tests need it');
  const directory = mkdtempSync(join(tmpdir(), 'rubricate-redis-'));
  let port = await freePort();
  let child: ChildProcess | undefined;

  async function launch(): Promise<void> {
    const started = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--dir', directory, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always', '--protected-mode', 'yes', '--loglevel', 'notice'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = started;
    await new Promise<void>((resolve, reject) => {
      let output = '';
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) {
          started.stdout!.off('data', onData);
          started.stdout!.resume();
          resolve();
        }
      };
      started.stdout!.on('data', onData);
      started.stderr!.resume();
      started.once('exit', (code) => reject(new Error(`redis-server exited with ${code} before it was ready:\n${output}`)));
    });
  }

  try {
    await launch();
  } catch {
    // The port was taken between our probe and the start: one more try on another.
    port = await freePort();
    await launch();
  }

  const server: RedisServer = {
    get url() {
      return `redis://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    directory,
    get running() {
      return child !== undefined && child.exitCode === null && child.signalCode === null;
    },
    async stop() {
      const running = child;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
      running.kill('SIGTERM');
      await exited;
    },
    async start() {
      if (server.running) return;
      await launch();
    },
  };
  return server;
}
