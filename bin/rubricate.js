#!/usr/bin/env node
// Runs the build (dist/) whenever it is present and current: an installed package always, and a
// checkout after `npm ci` (its `prepare` script builds) or `npm run build`. A checkout whose
// sources changed since the build runs the TypeScript through tsx instead, so it is never stale,
// and says so on a terminal. RUBRICATE_USE_BUILD=1 forces the build, RUBRICATE_USE_BUILD=0 the sources.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildState, builtCli, sourceRoot } from './build-state.js';

const choice = process.env.RUBRICATE_USE_BUILD;
const state = choice === undefined ? buildState() : undefined;
const useBuild = choice === '1' ? existsSync(builtCli) : choice === '0' ? false : state === 'current';
if (useBuild) {
  await import(pathToFileURL(builtCli).href);
} else {
  if (state !== undefined && process.stderr.isTTY) {
    process.stderr.write(`rubricate: running the TypeScript sources (dist/ is ${state === 'missing' ? 'not built' : 'older than src/'}; \`npm run build\` makes start-up faster)\n`);
  }
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(join(sourceRoot, 'cli', 'main.ts')).href);
}
