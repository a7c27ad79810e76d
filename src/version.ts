import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

function readVersion(): string {
  // Works from src/ (tsx, tests) and from dist/ (published build): package.json sits one level up from either.
  for (const candidate of ['../package.json', '../../package.json']) {
    try {
      const manifest = require(candidate) as { name?: string; version?: string };
      if (manifest.name === 'rubricate' && manifest.version) return manifest.version;
    } catch {
      // try the next location
    }
  }
  return '0.0.0';
}

/**
 * The package's version, as provenance records it.
 *
 * @example
 * ```ts
 * import { rubricateVersion } from 'rubricate';
 * console.log(`graded with rubricate ${rubricateVersion}`);
 * ```
 */
export const rubricateVersion: string = readVersion();
