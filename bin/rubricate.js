#!/usr/bin/env node
// Runs the build (dist/) whenever it is present and current: an installed package always, and a
// checkout after `npm ci` (its `prepare` script builds) or `npm run build`. A checkout whose
// sources changed since the build runs the TypeScript through tsx instead, so it is never stale.
// RUBRICATE_USE_BUILD=1 forces the build, RUBRICATE_USE_BUILD=0 the sources.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'dist', 'cli', 'main.js');
const sources = join(root, 'src');

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

function buildIsCurrent() {
  if (!existsSync(built)) return false;
  if (!existsSync(sources)) return true;
  return statSync(built).mtimeMs >= newestSource(sources);
}

const choice = process.env.RUBRICATE_USE_BUILD;
const useBuild = choice === '1' ? existsSync(built) : choice === '0' ? false : buildIsCurrent();
if (useBuild) {
  await import(pathToFileURL(built).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(join(sources, 'cli', 'main.ts')).href);
}
