/**
 * `npm test`'s runner (test/support/run-tests.mjs) on a light install: it stops with one clear line
 * instead of starting vitest, whose missing native binding would end in advice to delete
 * package-lock.json. Run on a copy of the runner beside a package.json and no node_modules.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
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
