// `prepare`: npm runs it after `npm ci` in a checkout, and when the package is installed from a
// folder (`npm install ../rubricate`, `npx rubricate` inside the checkout, `npm install -g .`).
// It builds dist/ only where there are sources and the build is missing or older than them, so
// installing a built checkout, an unpacked package or a tarball never builds again.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { buildState, packageRoot, sourceRoot } from './build-state.js';
import { existsSync } from 'node:fs';

if (existsSync(sourceRoot) && buildState() !== 'current') {
  const build = spawnSync(process.execPath, ['--import', 'tsx', join(packageRoot, 'scripts', 'build.ts')], { cwd: packageRoot, stdio: 'inherit' });
  process.exitCode = build.status ?? 1;
}
