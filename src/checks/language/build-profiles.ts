/**
 * Regenerates `assets/langdetect-profiles.br` from the language profiles that ship with Python's
 * `langdetect` 1.0.9 (the `langdetect/profiles/` folder: one JSON file per language,
 * `{name, freq: {ngram: count}, n_words: [unigrams, bigrams, trigrams]}`).
 *
 *   npx tsx src/checks/language/build-profiles.ts <profiles-folder>
 *
 * The output is a compact text table (one language per line: code, the three n-gram
 * totals, then n-gram/count pairs, tab-separated, counts in base 36), brotli-compressed.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants } from 'node:zlib';
import { safeParseJson } from '../../util/json.js';

interface RawProfile {
  name: string;
  freq: Record<string, number>;
  n_words: number[];
}

function main(): void {
  const folder = process.argv[2];
  if (!folder) throw new Error('usage: build-profiles.ts <langdetect profiles folder>');
  const lines: string[] = [];
  for (const file of readdirSync(folder).sort()) {
    const parsed = safeParseJson(readFileSync(path.join(folder, file), 'utf8'));
    if (!parsed.ok) throw new Error(`${file}: ${parsed.error}`);
    const profile = parsed.value as RawProfile;
    const fields = [profile.name, profile.n_words.map((count) => count.toString(36)).join(' ')];
    for (const [ngram, count] of Object.entries(profile.freq)) {
      if (/[\t\n]/.test(ngram)) throw new Error(`${file}: n-gram with a tab or newline`);
      fields.push(ngram, count.toString(36));
    }
    lines.push(fields.join('\t'));
  }
  const packed = brotliCompressSync(Buffer.from(lines.join('\n'), 'utf8'), {
    params: { [constants.BROTLI_PARAM_QUALITY]: 11 },
  });
  const output = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../assets/langdetect-profiles.br');
  writeFileSync(output, packed);
  console.log(`wrote ${output}: ${lines.length} languages, ${packed.length} bytes`);
}

main();
