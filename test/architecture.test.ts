/**
 * The layering of `docs/architecture.md`, enforced: no import goes from a lower layer to a
 * higher one, every source file belongs to a layer, and no two files import each other
 * through any chain (type-only imports included).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importCycles, layerOf, layerViolations, readImportGraph, readLayering, type ImportGraph } from './support/import-graph.js';
import { projectRoot } from './helpers.js';

const layering = readLayering(readFileSync(join(projectRoot, 'docs/architecture.md'), 'utf8'));
const graph = readImportGraph(projectRoot);

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

  it('the checks catch what they are for', () => {
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
  });
});
