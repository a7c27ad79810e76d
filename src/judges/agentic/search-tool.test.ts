import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import type { RubricateError } from '../../errors.js';
import { test } from '../../testing/vitest-fixtures.js';
import { loadDocuments, rankDocuments } from './search-tool.js';

describe('the documents the search tool reads', () => {
  test('ranks the documents holding the rarer query words first; a folder and a JSONL file read alike', async ({ tempDir }) => {
    const texts = { 'a.txt': 'Water boils at 100 degrees at sea level.', 'b.md': 'Water is wet. Water is clear. Water flows.', 'c.txt': 'Mountains are high.', 'notes.bin': 'boils boils boils' };
    const folder = join(tempDir, 'docs');
    mkdirSync(folder);
    for (const [name, text] of Object.entries(texts)) writeFileSync(join(folder, name), text);
    const fromFolder = await loadDocuments(folder);
    expect(fromFolder.documents.map((document) => document.id)).toEqual(['a.txt', 'b.md', 'c.txt']);
    expect(rankDocuments(fromFolder, 'water boils', 5).map(({ document }) => document.id)).toEqual(['a.txt', 'b.md']);
    expect(rankDocuments(fromFolder, 'volcano', 5)).toEqual([]);

    const file = join(tempDir, 'docs.jsonl');
    writeFileSync(file, ['a.txt', 'b.md', 'c.txt'].map((id) => JSON.stringify({ id, text: texts[id as keyof typeof texts] })).join('\n'));
    const fromFile = await loadDocuments(file);
    expect(rankDocuments(fromFile, 'water boils', 5).map(({ document, score }) => [document.id, score])).toEqual(rankDocuments(fromFolder, 'water boils', 5).map(({ document, score }) => [document.id, score]));
    // The same documents, the same identity in cache keys; another text, another.
    expect(fromFile.sha256).toBe(fromFolder.sha256);
    writeFileSync(file, JSON.stringify({ id: 'a.txt', text: 'changed' }));
    expect((await loadDocuments(file)).sha256).not.toBe(fromFolder.sha256);
  });

  test('a bad line stops the run naming the file, the line and the field', async ({ tempDir }) => {
    const file = join(tempDir, 'docs.jsonl');
    writeFileSync(file, `${JSON.stringify({ id: 'ok', text: 'fine' })}\n${JSON.stringify({ id: 'no-text' })}\n`);
    const error = (await loadDocuments(file).catch((caught: unknown) => caught)) as RubricateError;
    expect([error.code, error.message, error.details]).toEqual(['CONFIG_INVALID', `--documents ${file}: line 2: field "text" must be a non-empty string`, { field: 'text', file, line: 2 }]);
    writeFileSync(file, '');
    expect(((await loadDocuments(file).catch((caught: unknown) => caught)) as RubricateError).message).toContain('holds no documents');
  });
});
