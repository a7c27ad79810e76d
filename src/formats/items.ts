/**
 * The canonical format: one item per JSONL line (or per CSV row, by the file's name), validated
 * as it streams. Rubric-only items (no `response`, as `convert` writes them for benchmarks that
 * carry none) are graded with `--responses FILE` ({id, response} lines joined on `id`).
 */
import { RubricateError } from '../errors.js';
import { normalizeItem } from '../rubric/normalize.js';
import { ImageReader } from '../images/reader.js';
import { joinResponses, readJsonObjects, shardMembership, type ExampleEntry } from './shared.js';
import type { ImportRecord } from '../rubric/records.js';
import type { Importer } from './types.js';

type Line = Record<string, unknown>;

async function* lines(file: string): AsyncGenerator<ExampleEntry<Line>> {
  for await (const entry of readJsonObjects(file)) {
    if ('error' in entry) yield entry;
    else yield { line: entry.line, example: entry.value, key: entry.value.id === undefined ? `line-${entry.line}` : String(entry.value.id) };
  }
}

export const itemsImporter: Importer = {
  name: 'items',
  accepts: ['rubrics', 'responses', 'imageRoot', 'allowPrivateImageUrls'],
  shards: true,
  defaultScoring: 'weighted_mean',
  description: 'rubricate items JSONL (or CSV): {id, prompt, response, rubric | rubric_id, reference?, tags?, metadata?}; rubric-only items take --responses FILE ({id, response})',
  async *read(file, options): AsyncGenerator<ImportRecord> {
    const images = options.images ?? (await ImageReader.open());
    // Image files and URLs are read here, at the edge, for the records yielded only, so the item carries their bytes like any other image.
    const normalize = async (record: Line, line: number, response = record.response) =>
      normalizeItem(response === record.response ? record : { ...record, response }, { file, line, rubrics: options.rubrics, loadedImages: await images.read(record, { file, line }) });
    if (options.responses) {
      yield* joinResponses({
        examples: lines(file),
        responsesFile: options.responses,
        keyFields: ['id'],
        makeItem: (record, response, id, line) => normalize({ ...record, id }, line, response),
        sourceFile: file,
        onWarning: options.onWarning,
        shard: options.shard,
      });
      return;
    }
    const inShard = shardMembership(options.shard);
    for await (const entry of lines(file)) {
      if (!inShard()) continue;
      if ('error' in entry) {
        yield { kind: 'invalid', line: entry.line, error: entry.error };
        continue;
      }
      const { line, example: record } = entry;
      const id = record.id === undefined ? undefined : String(record.id);
      const withoutResponse = record.response === undefined;
      try {
        if (withoutResponse && !options.withoutResponses) {
          throw new RubricateError('INPUT_INVALID', 'record has no response: give --responses FILE (JSONL {id, response}) to grade rubric-only items', { file, line, field: 'response' });
        }
        const item = await normalize(record, line, withoutResponse ? '' : record.response);
        yield withoutResponse ? { kind: 'item', line, item, withoutResponse: true } : { kind: 'item', line, item };
      } catch (error) {
        yield { kind: 'invalid', line, ...(id === undefined ? {} : { id }), error: RubricateError.isInstance(error) ? error : new RubricateError('INPUT_INVALID', String(error), { file, line }) };
      }
    }
  },
};
