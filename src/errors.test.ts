import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorCodes, exitCodeMeanings, exitCodes } from './errors.js';

const root = resolve(__dirname, '..');

/** Rows `| a | b | … |` of the first Markdown table under `heading`. */
function tableRows(markdown: string, heading: string): string[][] {
  const start = markdown.indexOf(heading);
  expect(start, `${heading} is in the document`).toBeGreaterThanOrEqual(0);
  const rows: string[][] = [];
  let inTable = false;
  for (const line of markdown.slice(start).split('\n').slice(1)) {
    if (line.startsWith('|')) {
      inTable = true;
      const cells = line.split('|').slice(1, -1).map((cell) => cell.trim());
      if (!cells.every((cell) => /^-+$/.test(cell))) rows.push(cells);
    } else if (inTable) break;
  }
  return rows.slice(1);
}

describe('error documentation agrees with src/errors.ts', () => {
  it('docs/errors.md lists every code with its exit code and HTTP status, and no other', () => {
    const rows = tableRows(readFileSync(resolve(root, 'docs/errors.md'), 'utf8'), '## Codes');
    const documented = new Map(rows.map((cells) => [cells[0].replace(/`/g, ''), { exit: Number(cells[1]), http: Number(cells[2]), retried: cells[3] === 'yes' }]));
    for (const [code, entry] of Object.entries(errorCodes)) {
      expect(documented.get(code), `docs/errors.md needs a row for ${code}`).toEqual({ exit: entry.exitCode, http: entry.httpStatus, retried: entry.retryable });
    }
    expect([...documented.keys()].filter((code) => !(code in errorCodes))).toEqual([]);
  });

  it("the README's and docs/errors.md's exit-code tables hold exactly the exit codes the CLI uses", () => {
    const used = new Set<number>([...Object.values(exitCodes), ...Object.values(errorCodes).map((entry) => entry.exitCode)]);
    for (const [file, heading] of [['README.md', '### Exit codes'], ['docs/errors.md', '## Exit codes']] as const) {
      const listed = tableRows(readFileSync(resolve(root, file), 'utf8'), heading).map((cells) => Number(cells[0]));
      expect(new Set(listed), file).toEqual(used);
    }
  });

  it("the README's and docs/errors.md's exit-code tables say word for word what exitCodeMeanings says", () => {
    const expected = Object.entries(exitCodeMeanings).map(([code, meaning]) => [code, meaning]);
    expect(expected.map(([code]) => Number(code)).sort((a, b) => a - b)).toEqual(Object.values(exitCodes).sort((a, b) => a - b));
    for (const [file, heading] of [['README.md', '### Exit codes'], ['docs/errors.md', '## Exit codes']] as const) {
      expect(tableRows(readFileSync(resolve(root, file), 'utf8'), heading), file).toEqual(expected);
    }
  });
});
