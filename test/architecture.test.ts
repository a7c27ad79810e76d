/**
 * The layering of `docs/architecture.md`, enforced: no import goes from a lower layer to a
 * higher one, every source file belongs to a layer, and no two files import each other
 * through any chain (type-only imports included). Every path the map (and `test/README.md`) names exists.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importCycles, layerOf, layerViolations, readImportGraph, readLayering, type ImportGraph } from './support/import-graph.js';
import { projectRoot } from './helpers.js';

const architecture = readFileSync(join(projectRoot, 'docs/architecture.md'), 'utf8');
const layering = readLayering(architecture);
const graph = readImportGraph(projectRoot);

/**
 * Pairs of layer paths (a row's folders and files) that import each other, each pair sorted: an
 * import back up the order inside a row, which the row-level rule cannot see.
 */
function mutualImports(imports: ImportGraph): string[][] {
  const owner = (file: string) => layering.layers.flatMap((layer) => layer.paths).filter((path) => (path.endsWith('/') ? file.startsWith(path) : file === path)).sort((first, second) => second.length - first.length)[0] ?? file;
  const edges = new Set<string>();
  for (const [from, targets] of imports) for (const to of targets) if (owner(from) !== owner(to)) edges.add(`${owner(from)}\u0000${owner(to)}`);
  const pairs = [...edges].map((edge) => edge.split('\u0000')).filter(([from, to]) => from < to && edges.has(`${to}\u0000${from}`));
  return pairs.sort();
}

/** A code span naming a path from the project root. */
const rootedPath = /^(?:src|bench|test|docs|examples|clients)\//;
/** A code span that looks like a file or folder name: a known extension or a trailing slash. */
const pathLike = /^[\w@.-]+(?:\/[\w@.-]+)*(?:\.(?:ts|mjs|js|py|json|jsonl|md|br)|\/)$/;

/**
 * The paths a map names that do not exist. A rooted path (`src/…`, `bench/…`, `test/…`, …) must
 * exist as written; a shorter one must exist under the folder of its `###` heading (its first
 * span ending in `/`), from the project root, or under `src/`.
 */
function missingPaths(markdown: string, exists: (path: string) => boolean): string[] {
  const missing: string[] = [];
  let folder: string | undefined;
  for (const line of markdown.split('\n')) {
    const spans = [...line.matchAll(/`([^`]+)`/g)].map((match) => match[1]);
    if (line.startsWith('#')) folder = line.startsWith('### ') ? spans.find((span) => span.endsWith('/')) : undefined;
    for (const span of spans) {
      if (rootedPath.test(span)) {
        if (!exists(span)) missing.push(span);
      } else if (pathLike.test(span) && ![...(folder ? [folder] : []), '', 'src/'].some((base) => exists(base + span))) {
        missing.push(folder ? `${span} (under ${folder})` : span);
      }
    }
  }
  return missing;
}

describe('architecture', () => {
  it('reads a layer table that covers the tree, lowest first, cli last', () => {
    expect(layering.layers.length).toBeGreaterThanOrEqual(5);
    expect(layering.layers.map((layer) => layer.rank)).toEqual([...layering.layers.map((layer) => layer.rank)].sort((first, second) => first - second));
    expect(layerOf('src/cli/main.ts', layering.layers)?.rank).toBe(Math.max(...layering.layers.map((layer) => layer.rank)));
    expect(layerOf('src/errors.ts', layering.layers)?.rank).toBe(layering.layers[0].rank);
    // The graph is real: the CLI's entry imports many files, and a known chain is seen.
    expect(graph.get('src/cli/main.ts')?.length).toBeGreaterThan(5);
    expect(graph.get('src/pipeline/grader.ts')).toContain('src/engine/engine.ts');
  });

  it('no lower layer imports a higher one, and every source file has a layer', () => {
    const { violations, unlayered, staleExceptions } = layerViolations(graph, layering);
    expect(unlayered).toEqual([]);
    expect(violations.map((entry) => `${entry.from} (${entry.fromLayer}) imports ${entry.to} (${entry.toLayer})`)).toEqual([]);
    expect(staleExceptions).toEqual([]);
  });

  it('no import cycles between source files', () => {
    expect(importCycles(graph)).toEqual([]);
  });

  it('no two folders import each other, but the error class and util', () => {
    // errors.ts redacts its messages through util/redact.ts, and util's readers throw RubricateError.
    expect(mutualImports(graph)).toEqual([['src/errors.ts', 'src/util/']]);
  });

  it('every path the map and the tests guide name exists', () => {
    const exists = (path: string) => existsSync(join(projectRoot, path));
    expect(missingPaths(architecture, exists)).toEqual([]);
    expect(missingPaths(readFileSync(join(projectRoot, 'test/README.md'), 'utf8'), exists)).toEqual([]);
  });

  it('the checks catch what they are for', () => {
    const map = ['## Where', '### `src/util/`: files', '- `files.ts`, `gone.ts`, `util/redact.ts`, `src/nowhere.ts`, `JSON.parse`, `--store`', '## Later', '- `files.ts`'].join('\n');
    expect(missingPaths(map, (path) => existsSync(join(projectRoot, path)))).toEqual(['gone.ts (under src/util/)', 'src/nowhere.ts', 'files.ts']);
    const synthetic: ImportGraph = new Map([
      ['src/util/a.ts', ['src/cli/b.ts']],
      ['src/cli/b.ts', ['src/util/a.ts']],
      ['src/pipeline/c.ts', ['src/pipeline/c.ts']],
      ['src/nowhere/d.ts', []],
    ]);
    const found = layerViolations(synthetic, { layers: layering.layers, exceptions: [{ from: 'src/util/x.ts', to: 'src/cli/y.ts' }] });
    expect(found.violations.map((entry) => [entry.from, entry.to])).toEqual([['src/util/a.ts', 'src/cli/b.ts']]);
    expect(found.unlayered).toEqual(['src/nowhere/d.ts']);
    expect(found.staleExceptions).toEqual([{ from: 'src/util/x.ts', to: 'src/cli/y.ts' }]);
    expect(importCycles(synthetic)).toEqual([['src/cli/b.ts', 'src/util/a.ts'], ['src/pipeline/c.ts']]);
    expect(mutualImports(synthetic)).toEqual([['src/cli/', 'src/util/']]);
  });
});
