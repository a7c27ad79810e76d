// Whether this copy of rubricate runs from its build (dist/) or from its TypeScript sources:
// shared by bin/rubricate.js and the `prepare` script (bin/prepare.js).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
/** The build's CLI entry, written last by the build: its presence marks a complete build. */
export const builtCli = join(packageRoot, 'dist', 'cli', 'main.js');
/** The sources: present in a checkout, absent from an installed package. */
export const sourceRoot = join(packageRoot, 'src');

/** Newest modification time of the TypeScript sources (a few hundred stats: milliseconds). */
function newestSource(directory) {
  let newest = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts') || entry.name.endsWith('.json')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** 'current' (dist/ is at least as new as src/, or there is no src/), 'stale' or 'missing'. */
export function buildState() {
  if (!existsSync(builtCli)) return 'missing';
  if (!existsSync(sourceRoot)) return 'current';
  return statSync(builtCli).mtimeMs >= newestSource(sourceRoot) ? 'current' : 'stale';
}
