/**
 * The canonical format: one item per JSONL line (or per CSV row, by the file's name), validated
 * as it streams. Rubric-only items (no `response`, as `convert` writes them for benchmarks that
 * carry none) are graded with `--responses FILE` ({id, response} lines joined on `id`).
 */
import { RubricateError } from '../../errors.js';
import { normalizeItem } from '../normalize.js';
import { fetchRemoteImages, remoteImageUrls } from '../../images/images.js';
import { joinResponses, readJsonObjects, type ExampleEntry } from './shared.js';
import type { ImportRecord } from '../records.js';
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
  accepts: ['rubrics', 'responses'],
  defaultScoring: 'weighted_mean',
  description: 'rubricate items JSONL (or CSV): {id, prompt, response, rubric | rubric_id, reference?, tags?, metadata?}; rubric-only items take --responses FILE ({id, response})',
  async *read(file, options): AsyncGenerator<ImportRecord> {
    const normalize = (record: Line, line: number) => normalizeItem(record, { file, line, rubrics: options.rubrics });
    if (options.responses) {
      yield* joinResponses({
        examples: lines(file),
        responsesFile: options.responses,
        keyFields: ['id'],
        makeItem: (record, response, id, line) => normalize({ ...record, id, response }, line),
        sourceFile: file,
        onWarning: options.onWarning,
      });
      return;
    }
    for await (const entry of lines(file)) {
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
        // http(s) images are fetched here, at the edge, so the item carries their bytes like any other image.
        const remoteImages = remoteImageUrls(record).length > 0 ? await fetchRemoteImages(record, { file, line }) : undefined;
        const item = normalizeItem(withoutResponse ? { ...record, response: '' } : record, { file, line, rubrics: options.rubrics, remoteImages });
        yield withoutResponse ? { kind: 'item', line, item, withoutResponse: true } : { kind: 'item', line, item };
      } catch (error) {
        yield { kind: 'invalid', line, ...(id === undefined ? {} : { id }), error: RubricateError.isInstance(error) ? error : new RubricateError('INPUT_INVALID', String(error), { file, line }) };
      }
    }
  },
};
