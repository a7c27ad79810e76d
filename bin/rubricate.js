#!/usr/bin/env node
// The installed package runs its build. A source checkout runs the TypeScript through tsx
// (always current), unless RUBRICATE_USE_BUILD=1 asks for the build (benchmarks, profiling).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'dist', 'cli', 'main.js');
const source = join(root, 'src', 'cli', 'main.ts');
const useBuild = existsSync(built) && (!existsSync(source) || process.env.RUBRICATE_USE_BUILD === '1');
if (useBuild) {
  await import(pathToFileURL(built).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(source).href);
}
