import { readFile } from 'node:fs/promises';
import { RubricateError } from '../../src/errors.js';
import { safeParseJson } from '../../src/util/json.js';

/** Benchmark items from a file holding a JSON array, or JSONL with one item per line. */
export async function readItemsFile<T>(file: string): Promise<T[]> {
  const text = await readFile(file, 'utf8');
  const whole = safeParseJson(text);
  if (whole.ok && Array.isArray(whole.value)) return whole.value as T[];
  const items: T[] = [];
  for (const [index, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    const parsed = safeParseJson(line);
    if (!parsed.ok) throw new RubricateError('INPUT_INVALID', `not JSON: ${parsed.error}`, { file, line: index + 1 });
    items.push(parsed.value as T);
  }
  return items;
}
