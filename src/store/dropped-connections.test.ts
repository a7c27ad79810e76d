import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const moduleUrl = pathToFileURL(fileURLToPath(new URL('./dropped-connections.ts', import.meta.url))).href;

/** Runs a script in a fresh Node process (each test needs its own process-wide handlers). */
function runScript(body: string): { status: number | null; stderr: string; stdout: string } {
  const script = `import { noteDroppedRedisConnection } from ${JSON.stringify(moduleUrl)};\n${body}`;
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  return { status: result.status, stderr: result.stderr, stdout: result.stdout };
}

describe('rejections of Redis connections dropped on purpose', () => {
  it('ignores ioredis\'s "Connection is closed." once a connection was dropped, and nothing else', () => {
    const ignored = runScript(`noteDroppedRedisConnection();\nPromise.reject(new Error('Connection is closed.'));\nsetTimeout(() => console.log('still running'), 50);`);
    expect(ignored.status, ignored.stderr).toBe(0);
    expect(ignored.stdout).toContain('still running');
    const other = runScript(`noteDroppedRedisConnection();\nPromise.reject(new Error('something else'));\nsetTimeout(() => console.log('still running'), 50);`);
    expect(other.status).not.toBe(0);
    expect(other.stderr).toContain('something else');
    expect(other.stdout).not.toContain('still running');
  });

  it('leaves the same rejection fatal while no connection was dropped', () => {
    const untouched = runScript(`Promise.reject(new Error('Connection is closed.'));\nsetTimeout(() => console.log('still running'), 50);`);
    expect(untouched.status).not.toBe(0);
    expect(untouched.stdout).not.toContain('still running');
  });
});
