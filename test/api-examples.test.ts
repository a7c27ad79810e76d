/**
 * Every value the package exports (`rubricate` and each subpath entry) has an `@example`, and
 * `test/api-examples.test-d.ts`, which `npm run typecheck` compiles, holds the current ones.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { examplesModule, examplesPath, exportedValues, packageEntries } from './support/api-examples.js';
import { projectRoot } from './helpers.js';

const values = exportedValues(projectRoot);

describe('the examples of the public API', () => {
  it('reads every entry of package.json and the values each exports', () => {
    expect([...packageEntries(projectRoot).keys()]).toEqual(['rubricate', 'rubricate/server', 'rubricate/report', 'rubricate/generation', 'rubricate/meta', 'rubricate/store', 'rubricate/testing']);
    const names = values.map((value) => `${value.entry} ${value.name}`);
    for (const name of ['rubricate grade', 'rubricate gradeFile', 'rubricate scoreFile', 'rubricate Comparer', 'rubricate Grader', 'rubricate/server createServer']) expect(names).toContain(name);
    // Re-exported under another name: the example sits on the declaration.
    expect(values.find((value) => value.name === 'createServer')).toMatchObject({ file: 'src/server/app.ts', declared: 'createServerApp' });
    // Types need no example.
    expect(names).not.toContain('rubricate GradeOutcome');
  });

  it('every exported value has an @example', () => {
    expect(values.filter((value) => value.examples.length === 0).map((value) => `${value.entry}: ${value.name} (${value.file})`)).toEqual([]);
  });

  it(`${examplesPath} is current (npm run api-examples writes it)`, () => {
    expect(readFileSync(join(projectRoot, examplesPath), 'utf8')).toBe(examplesModule(projectRoot, values));
  });

  it('an example imports the package by its entries, as a user writes it', () => {
    const module = examplesModule(projectRoot, [{ entry: 'rubricate', name: 'grade', file: 'src/pipeline/grade.ts', declared: 'grade', examples: ["import { grade, type Item } from 'rubricate';\nconst items: Item[] = [];\nawait grade(items, {});"] }]);
    expect(module).toContain("import { grade, type Item } from '../src/index.js';");
    expect(module).toContain('export async function rubricate__grade(): Promise<void> {\n  const items: Item[] = [];\n  await grade(items, {});\n}');
    expect(() => examplesModule(projectRoot, [{ entry: 'rubricate', name: 'grade', file: 'src/pipeline/grade.ts', declared: 'grade', examples: ["import { grade } from 'somewhere-else';"] }])).toThrow(/only the package's entries/);
  });
});
