/**
 * The `@example` of every value the package exports (`rubricate` and each subpath entry of
 * package.json's `exports`), read from the declaration each export resolves to, and the one
 * TypeScript file that holds them all (`test/api-examples.test-d.ts`, written by
 * `npm run api-examples`), which `npm run typecheck` compiles. Reading is syntactic (no type
 * check), so `test/api-examples.test.ts` stays fast.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** Where the examples are written, from the project root. */
export const examplesPath = 'test/api-examples.test-d.ts';

export interface ExportedValue {
  /** The package specifier (`rubricate`, `rubricate/server`). */
  entry: string;
  /** The name a user imports. */
  name: string;
  /** The file and name of its declaration. */
  file: string;
  declared: string;
  /** Each `@example`'s code, fences removed. */
  examples: string[];
}

const parsed = new Map<string, ts.SourceFile>();
function sourceOf(file: string): ts.SourceFile {
  let source = parsed.get(file);
  if (!source) parsed.set(file, (source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)));
  return source;
}

function resolveModule(fromFile: string, specifier: string): string {
  const base = resolve(dirname(fromFile), specifier);
  const found = [base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')].find((candidate) => existsSync(candidate));
  if (!found) throw new Error(`${fromFile}: cannot resolve ${specifier}`);
  return found;
}

/** The package's entries: specifier → source file, from package.json's `exports` (their declaration paths). */
export function packageEntries(root: string): Map<string, string> {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; exports: Record<string, string | { types?: string }> };
  const entries = new Map<string, string>();
  for (const [subpath, target] of Object.entries(manifest.exports)) {
    if (typeof target === 'string' || !target.types) continue;
    const source = target.types.replace(/^\.\/dist\/types\//, 'src/').replace(/\.d\.ts$/, '.ts');
    entries.set(subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`, join(root, source));
  }
  return entries;
}

const exampleCode = (tag: ts.JSDocTag): string => {
  const text = (typeof tag.comment === 'string' ? tag.comment : (ts.getTextOfJSDocComment(tag.comment) ?? '')).trim();
  return text.replace(/^```\w*\n?/, '').replace(/\n?```$/, '').trim();
};

/** The declarations of `name` in `file` (following re-exports): undefined for a type, and why not found otherwise. */
function declarationOf(file: string, name: string, seen = new Set<string>()): { file: string; declared: string; nodes: ts.Node[] } | 'type' | undefined {
  const key = `${file}#${name}`;
  if (seen.has(key)) return undefined;
  seen.add(key);
  const source = sourceOf(file);
  const nodes: ts.Node[] = [];
  for (const statement of source.statements) {
    if ((ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement)) && statement.name?.text === name) nodes.push(statement);
    else if (ts.isVariableStatement(statement)) nodes.push(...statement.declarationList.declarations.filter((declaration) => ts.isIdentifier(declaration.name) && declaration.name.text === name));
    else if ((ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement)) && statement.name.text === name) return 'type';
  }
  if (nodes.length > 0) return { file, declared: name, nodes };
  for (const statement of source.statements) {
    if (!ts.isExportDeclaration(statement)) continue;
    const target = statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier) ? resolveModule(file, statement.moduleSpecifier.text) : file;
    if (!statement.exportClause) {
      const found = declarationOf(target, name, seen);
      if (found) return found;
    } else if (ts.isNamedExports(statement.exportClause)) {
      const specifier = statement.exportClause.elements.find((element) => element.name.text === name);
      if (specifier) return statement.isTypeOnly || specifier.isTypeOnly ? 'type' : declarationOf(target, (specifier.propertyName ?? specifier.name).text, seen);
    }
  }
  return undefined;
}

/** Every value an entry exports, with its declaration's examples. */
export function exportedValues(root: string): ExportedValue[] {
  const values: ExportedValue[] = [];
  for (const [entry, file] of packageEntries(root)) {
    for (const statement of sourceOf(file).statements) {
      if (!ts.isExportDeclaration(statement) || statement.isTypeOnly || !statement.exportClause || !ts.isNamedExports(statement.exportClause)) continue;
      for (const specifier of statement.exportClause.elements) {
        if (specifier.isTypeOnly) continue;
        const found = declarationOf(file, specifier.name.text);
        if (found === 'type') continue;
        if (!found) throw new Error(`${entry}: cannot find the declaration of ${specifier.name.text}`);
        const examples = found.nodes.flatMap((node) => ts.getJSDocTags(node).filter((tag) => tag.tagName.text === 'example').map(exampleCode));
        values.push({ entry, name: specifier.name.text, file: relative(root, found.file).split('\\').join('/'), declared: found.declared, examples });
      }
    }
  }
  return values;
}

const importLine = /^import\s+(type\s+)?\{([^}]*)\}\s+from\s+'([^']+)';?$/;

/**
 * The examples as one module: each example's imports of the package (`import { grade } from
 * 'rubricate'`) merged at the top and pointed at the sources; its other lines the body of an
 * async function of its own.
 */
export function examplesModule(root: string, values: readonly ExportedValue[]): string {
  const entries = packageEntries(root);
  const imports = new Map<string, Set<string>>();
  const functions: string[] = [];
  for (const value of values) {
    value.examples.forEach((example, index) => {
      const body: string[] = [];
      for (const line of example.split('\n')) {
        const match = importLine.exec(line.trim());
        if (!match) {
          body.push(line);
          continue;
        }
        // zod is the package's own dependency: a backend's settings schema is written with it.
        const target = entries.get(match[3]) ?? (match[3].startsWith('node:') || match[3] === 'zod' ? match[3] : undefined);
        if (!target) throw new Error(`the example of ${value.name} (${value.entry}) imports ${match[3]}: only the package's entries, zod and node: modules`);
        const names = imports.get(target) ?? new Set<string>();
        for (const name of match[2].split(',').map((part) => part.trim()).filter(Boolean)) names.add(match[1] ? `type ${name.replace(/^type\s+/, '')}` : name);
        imports.set(target, names);
      }
      const entryName = value.entry.replace(/[^\w]+/g, '_');
      functions.push(`/** ${value.entry}: ${value.name} (${value.file}) */\nexport async function ${entryName}__${value.name}${index > 0 ? `_${index + 1}` : ''}(): Promise<void> {\n${body.map((line) => (line ? `  ${line}` : '')).join('\n')}\n}\n`);
    });
  }
  const importLines = [...imports]
    .sort(([left], [right]) => left.localeCompare(right))
    .map(([target, names]) => `import { ${[...names].sort((left, right) => left.replace(/^type /, '').localeCompare(right.replace(/^type /, ''))).join(', ')} } from '${target.startsWith('node:') || target === 'zod' ? target : relative(join(root, 'test'), target).split('\\').join('/').replace(/\.ts$/, '.js')}';`);
  return [
    '// Written by `npm run api-examples` from the `@example` of every export of the package and its subpath entries',
    '// (test/support/api-examples.ts); `npm run typecheck` compiles it, nothing runs it. Do not edit it by hand.',
    '/* eslint-disable */',
    ...importLines,
    '',
    ...functions,
  ].join('\n');
}
