/**
 * `npm test`'s runner (test/support/run-tests.mjs), run as a copy in a folder of its own: on a light
 * install it stops with one clear line instead of starting vitest, whose missing native binding
 * would end in advice to delete package-lock.json; and an interrupt ends every step's processes.
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, vi } from 'vitest';
import { hangGuard } from '../src/testing/hang-guard.js';
import { test } from '../src/testing/vitest-fixtures.js';

test('after the light install, npm test says the full install is needed and exits 2 without starting a step', ({ tempDir }) => {
  mkdirSync(join(tempDir, 'test', 'support'), { recursive: true });
  copyFileSync('test/support/run-tests.mjs', join(tempDir, 'test', 'support', 'run-tests.mjs'));
  copyFileSync('package.json', join(tempDir, 'package.json'));
  const run = spawnSync(process.execPath, [join(tempDir, 'test', 'support', 'run-tests.mjs')], { cwd: tempDir, encoding: 'utf8' });
  expect(run.status).toBe(2);
  expect(run.stderr).toContain('npm test: this checkout has the light install (npm ci --omit=optional)');
  expect(run.stderr).toContain('Run `npm ci` for the full install, then `npm test`.');
  expect(run.stdout).not.toContain('started');
  expect(`${run.stdout}${run.stderr}`).not.toContain('package-lock.json');
});

test('an interrupt stops every step\'s processes, not only their shells, and starts no later step', async ({ tempDir }) => {
  mkdirSync(join(tempDir, 'test', 'support'), { recursive: true });
  copyFileSync('test/support/run-tests.mjs', join(tempDir, 'test', 'support', 'run-tests.mjs'));
  // A full install as far as the runner can tell, and steps that each start a long-lived process under their shell.
  mkdirSync(join(tempDir, 'node_modules', 'openai'), { recursive: true });
  writeFileSync(join(tempDir, 'node_modules', 'openai', 'package.json'), '{}');
  mkdirSync(join(tempDir, 'node_modules', '.bin'), { recursive: true });
  const sleeper = (name: string) => `node -e "require('fs').writeFileSync('${name}.pid', String(process.pid)); setInterval(() => {}, 1000)"`;
  writeFileSync(join(tempDir, 'node_modules', '.bin', 'vitest'), `#!/bin/sh\n${sleeper('vitest')}\n`, { mode: 0o755 });
  const scripts = { typecheck: `${sleeper('typecheck')}`, lint: 'echo lint ran > lint.ran', knip: 'true', 'test:python': `${sleeper('python')}` };
  writeFileSync(join(tempDir, 'package.json'), JSON.stringify({ scripts, optionalDependencies: { openai: '1.0.0' } }));
  const runner = spawn(process.execPath, [join(tempDir, 'test', 'support', 'run-tests.mjs')], { cwd: tempDir, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  runner.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const pidFiles = ['vitest', 'typecheck', 'python'].map((name) => join(tempDir, `${name}.pid`));
  await vi.waitFor(() => expect(pidFiles.every((file) => existsSync(file) && readFileSync(file, 'utf8') !== '')).toBe(true), { timeout: hangGuard(20_000), interval: 50 });
  const pids = pidFiles.map((file) => Number(readFileSync(file, 'utf8')));
  runner.kill('SIGTERM');
  const code = await new Promise<number | null>((resolve) => runner.once('close', resolve));
  expect(code, output).toBe(143);
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  await vi.waitFor(() => expect(pids.filter(alive)).toEqual([]), { timeout: hangGuard(10_000), interval: 50 });
  expect(existsSync(join(tempDir, 'lint.ran'))).toBe(false);
  expect(output).toContain('vitest: stopped by SIGTERM');
});
