#!/usr/bin/env node
// Runs the built CLI; in a source checkout without a build (or with RUBRICATE_FROM_SOURCE=1),
// runs the TypeScript through tsx.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'dist', 'cli', 'main.js');
if (process.env.RUBRICATE_FROM_SOURCE !== '1' && existsSync(built)) {
  await import(pathToFileURL(built).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(join(root, 'src', 'cli', 'main.ts')).href);
}
