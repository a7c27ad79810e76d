/**
 * The source tree's import graph and the layering rules read from `docs/architecture.md`,
 * for `test/architecture.test.ts`. Every relative import counts, type-only and dynamic ones
 * included: a type-only cycle still ties two layers together.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** Source file (path relative to the project, `/`-separated) → the source files it imports. */
export type ImportGraph = Map<string, string[]>;

export interface Layer {
  rank: number;
  name: string;
  /** `src/util/` (a folder and everything under it) or `src/errors.ts` (one file). */
  paths: string[];
}

export interface LayerException {
  from: string;
  to: string;
}

export interface Layering {
  layers: Layer[];
  exceptions: LayerException[];
}

const toPosix = (path: string) => path.split(sep).join('/');

function sourceFiles(directory: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) files.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(entry.name) && !/\.test(?:-d)?\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) files.push(path);
  }
  return files;
}

function resolveImport(fromFile: string, specifier: string): string | undefined {
  const base = resolve(dirname(fromFile), specifier);
  const candidates = [base.replace(/\.js$/, '.ts'), base.replace(/\.js$/, '.tsx'), base, `${base}.ts`, join(base, 'index.ts')];
  return candidates.find((candidate) => /\.tsx?$/.test(candidate) && existsSync(candidate));
}

/** The import graph of every non-test source file under `root/folder`. */
export function readImportGraph(root: string, folder = 'src'): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const file of sourceFiles(join(root, folder))) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = new Set<string>();
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = resolveImport(file, fileName);
      if (target) targets.add(toPosix(relative(root, target)));
    }
    graph.set(toPosix(relative(root, file)), [...targets]);
  }
  return graph;
}

function cells(row: string): string[] {
  return row
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split('|')
    .map((cell) => cell.trim());
}

function tableAfter(markdown: string, heading: string): string[][] {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start === -1) throw new Error(`docs/architecture.md has no "${heading}" section`);
  const rows: string[][] = [];
  for (const line of markdown.slice(start + heading.length + 2).split('\n')) {
    if (line.startsWith('#')) break;
    if (!line.startsWith('|')) {
      if (rows.length > 0) break;
      continue;
    }
    if (/^\|[\s|:-]+\|$/.test(line.trim())) continue;
    rows.push(cells(line));
  }
  return rows.slice(1);
}

const codeSpans = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]);

/** The `## Layers` table (rank, name, paths) and its `### Layer exceptions` table (from, to). */
export function readLayering(markdown: string): Layering {
  const layers = tableAfter(markdown, '## Layers').map(([layer, paths]): Layer => {
    const match = /^(\d+)\s+(.+)$/.exec(layer);
    if (!match) throw new Error(`layer "${layer}" must start with its rank`);
    return { rank: Number(match[1]), name: match[2], paths: codeSpans(paths) };
  });
  const exceptions = tableAfter(markdown, '### Layer exceptions').map(([from, to]) => ({ from: codeSpans(from)[0], to: codeSpans(to)[0] }));
  return { layers, exceptions };
}

/** The layer owning a file: the row with the longest path that is the file or a folder holding it. */
export function layerOf(file: string, layers: readonly Layer[]): Layer | undefined {
  let best: { layer: Layer; length: number } | undefined;
  for (const layer of layers) {
    for (const path of layer.paths) {
      const owns = path.endsWith('/') ? file.startsWith(path) : file === path;
      if (owns && (!best || path.length > best.length)) best = { layer, length: path.length };
    }
  }
  return best?.layer;
}

export interface LayerViolation {
  from: string;
  to: string;
  fromLayer: string;
  toLayer: string;
}

/** Imports from a lower layer into a higher one, minus the listed exceptions (and the exceptions no longer needed). */
export function layerViolations(graph: ImportGraph, layering: Layering): { violations: LayerViolation[]; unlayered: string[]; staleExceptions: LayerException[] } {
  const violations: LayerViolation[] = [];
  const unlayered: string[] = [];
  const used = new Set<LayerException>();
  for (const [from, targets] of graph) {
    const fromLayer = layerOf(from, layering.layers);
    if (!fromLayer) {
      unlayered.push(from);
      continue;
    }
    for (const to of targets) {
      const toLayer = layerOf(to, layering.layers);
      if (!toLayer || toLayer.rank <= fromLayer.rank) continue;
      const exception = layering.exceptions.find((entry) => entry.from === from && entry.to === to);
      if (exception) used.add(exception);
      else violations.push({ from, to, fromLayer: `${fromLayer.rank} ${fromLayer.name}`, toLayer: `${toLayer.rank} ${toLayer.name}` });
    }
  }
  return { violations, unlayered, staleExceptions: layering.exceptions.filter((entry) => !used.has(entry)) };
}

/** Every import cycle between files (strongly connected components of more than one file, or a file importing itself). */
export function importCycles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let counter = 0;
  // Iterative Tarjan: the graph is deep enough that recursion depth is not worth the risk.
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; next: number }> = [{ node: start, next: 0 }];
    index.set(start, counter);
    lowLink.set(start, counter);
    counter += 1;
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const targets = (graph.get(frame.node) ?? []).filter((target) => graph.has(target));
      if (frame.next < targets.length) {
        const target = targets[frame.next];
        frame.next += 1;
        if (!index.has(target)) {
          index.set(target, counter);
          lowLink.set(target, counter);
          counter += 1;
          stack.push(target);
          onStack.add(target);
          work.push({ node: target, next: 0 });
        } else if (onStack.has(target)) {
          lowLink.set(frame.node, Math.min(lowLink.get(frame.node)!, index.get(target)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        lowLink.set(parent, Math.min(lowLink.get(parent)!, lowLink.get(frame.node)!));
      }
      if (lowLink.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        const selfImport = component.length === 1 && (graph.get(frame.node) ?? []).includes(frame.node);
        if (component.length > 1 || selfImport) cycles.push(component.sort());
      }
    }
  }
  return cycles;
}
