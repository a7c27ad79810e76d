/**
 * Installs promptfoo for side-by-side benchmarks into a folder outside the repository (never a
 * project dependency: ~1.4 GB, ~2–3 minutes), reusing an earlier install found there.
 * 0.121.20 is pinned: the last release that runs on Node 20.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { safeParseJson } from '../../src/util/json.js';
import { childEnvironment } from '../support/simulator-process.js';

export const promptfooVersion = '0.121.20';

export function defaultPromptfooInstallDirectory(): string {
  return path.join(os.tmpdir(), `rubricate-promptfoo-${promptfooVersion}`);
}

/** The CLI entry script inside an install folder (run with the current `node`). */
export function promptfooEntry(installDirectory: string): string {
  return path.join(installDirectory, 'node_modules', 'promptfoo', 'dist', 'src', 'entrypoint.js');
}

/** True when `installDirectory` holds a complete install of the pinned version. */
export function isPromptfooInstalled(installDirectory: string = defaultPromptfooInstallDirectory()): boolean {
  const manifest = path.join(installDirectory, 'node_modules', 'promptfoo', 'package.json');
  if (!existsSync(manifest) || !existsSync(promptfooEntry(installDirectory))) return false;
  const parsed = safeParseJson(readFileSync(manifest, 'utf8'));
  return parsed.ok && (parsed.value as { version?: unknown } | null)?.version === promptfooVersion;
}

export type PromptfooInstall =
  | { ok: true; installDirectory: string; entry: string; /** false when an earlier install was reused */ installed: boolean; installMs: number }
  | { ok: false; reason: string };

/**
 * Makes sure promptfoo is installed in `installDirectory`; npm runs only when it is missing.
 * Failure (no registry, disk full) comes back as `{ ok: false, reason }`, never as a throw.
 */
export async function ensurePromptfoo(
  options: { installDirectory?: string; timeoutMs?: number; log?: (line: string) => void } = {},
): Promise<PromptfooInstall> {
  const installDirectory = options.installDirectory ?? defaultPromptfooInstallDirectory();
  if (isPromptfooInstalled(installDirectory)) {
    return { ok: true, installDirectory, entry: promptfooEntry(installDirectory), installed: false, installMs: 0 };
  }
  try {
    mkdirSync(installDirectory, { recursive: true });
    const manifest = path.join(installDirectory, 'package.json');
    if (!existsSync(manifest)) writeFileSync(manifest, `${JSON.stringify({ name: 'rubricate-bench-promptfoo', private: true }, null, 2)}\n`);
  } catch (error) {
    return { ok: false, reason: `cannot prepare ${installDirectory}: ${error instanceof Error ? error.message : String(error)}` };
  }
  options.log?.(`installing promptfoo@${promptfooVersion} into ${installDirectory} (about 1.4 GB, a few minutes)`);
  const started = performance.now();
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const outcome = await new Promise<{ code: number | null; output: string; error?: string }>((resolve) => {
    let output = '';
    const child = spawn(npm, ['install', '--no-audit', '--no-fund', '--loglevel=warn', '--save-exact', `promptfoo@${promptfooVersion}`], {
      cwd: installDirectory,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: childEnvironment(),
    });
    const collect = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-8000);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const timer = setTimeout(() => child.kill('SIGTERM'), options.timeoutMs ?? 15 * 60_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, output, error: error.message });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
  const installMs = performance.now() - started;
  if (outcome.code !== 0 || !isPromptfooInstalled(installDirectory)) {
    const detail = outcome.error ?? outcome.output.trim().split('\n').slice(-6).join(' | ');
    return { ok: false, reason: `npm install promptfoo@${promptfooVersion} failed (exit ${outcome.code}): ${detail}` };
  }
  return { ok: true, installDirectory, entry: promptfooEntry(installDirectory), installed: true, installMs };
}
