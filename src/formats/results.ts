/**
 * rubricate's own results JSONL, read back two ways: as results (re-scoring, reports) and as
 * items (`grade --format results`, `rubricate rejudge`: the same responses graded again with
 * another judge, other settings or another rubrics file).
 *
 * As items, a line gives back what its judge was shown: prompt, response, reference, images,
 * tags, metadata, and the rubric rebuilt from its criteria (id, text, points, tags, kind). A
 * results line does not keep scales, checks, sub-checks, a gate or criterion metadata, so the
 * rebuilt rubric must hash to the line's `rubric_hash`; when it does not, the rubric comes from
 * `--rubrics FILE` by the line's `rubric_id` (which is also how a rubric is changed on purpose).
 * A line written without its texts (`grade --no-text`) cannot be graded again, and says so.
 */
import { RubricateError, errorCodes, formatLocation, type ErrorCode, type SerializedError } from '../errors.js';
import type { ItemImage } from '../images/images.js';
import { readResults, type ResultRecord } from '../results/results.js';
import { rubricHash } from '../rubric/hashing.js';
import type { ImportRecord } from '../rubric/records.js';
import type { Criterion, Item, Rubric } from '../rubric/schema.js';
import type { ImportOptions, Importer, ResultsImporter } from './types.js';

export const resultsImporter: ResultsImporter = {
  name: 'results',
  accepts: [],
  description: 'rubricate results JSONL (the output of grade)',
  read: (file) => readResults(file),
};

/** Why a results line cannot be graded again when it was written without its texts. */
export const withoutTextsReason =
  'it was written without its texts (grade --no-text): its prompt and response are not in the file, so there is nothing to show a judge; grade the original input again instead';

/** A results line as an item to grade again, with the line it came from (absent for a line that was already invalid). */
export interface RegradeRecord {
  record: ImportRecord;
  previous?: ResultRecord;
}

function rebuiltRubric(record: ResultRecord): Rubric {
  const criteria: Criterion[] = record.criteria.map((criterion) => ({ id: criterion.id, text: criterion.text ?? '', points: criterion.points, tags: criterion.tags, kind: criterion.kind }));
  return { id: record.rubric_id ?? '', criteria };
}

function rebuiltImages(record: ResultRecord): ItemImage[] | string {
  const images = record.images ?? [];
  const missing = images.find((image) => image.data === undefined);
  if (missing) return `image ${missing.index} was larger than a results line keeps, so its bytes are not in the file; grade the original input again`;
  return images.map((image) => ({ place: image.place as ItemImage['place'], index: image.index, mediaType: image.media_type, data: image.data!, sha256: image.sha256, bytes: image.bytes, source: image.source }));
}

/** The item a graded results line was graded from, or the reason it cannot be rebuilt (and the field at fault). */
function itemOf(record: ResultRecord, rubrics: ImportOptions['rubrics']): Item | { reason: string; field: string } {
  if (record.prompt === undefined || record.response === undefined) return { reason: withoutTextsReason, field: record.response === undefined ? 'response' : 'prompt' };
  if (record.step_offsets !== undefined) {
    return { reason: 'it holds an agent trajectory, and a results line keeps its rendered steps, not the trajectory its checks read; grade the original input again', field: 'step_offsets' };
  }
  let rubric: Rubric;
  if (rubrics) {
    const found = record.rubric_id === undefined ? undefined : rubrics.get(record.rubric_id);
    if (!found) return { reason: `its rubric_id ${JSON.stringify(record.rubric_id ?? null)} is not in the rubrics file`, field: 'rubric_id' };
    rubric = found;
  } else {
    rubric = rebuiltRubric(record);
    if (record.criteria.some((criterion) => criterion.text === undefined) || record.rubric_hash === undefined || rubricHash(rubric) !== record.rubric_hash) {
      return {
        reason: 'its rubric has parts a results line does not keep (scales, checks, sub-checks, a gate or criterion metadata), so it cannot be rebuilt from the line: give the rubrics with --rubrics FILE (matched by rubric_id)',
        field: 'rubric_hash',
      };
    }
  }
  const images = rebuiltImages(record);
  if (typeof images === 'string') return { reason: images, field: 'images' };
  const item: Item = { id: record.id, prompt: record.prompt.map((message) => ({ role: String(message.role), content: String(message.content) })), response: record.response, rubric };
  if (images.length > 0) item.images = images;
  if (record.reference !== undefined) item.reference = record.reference;
  if (record.tags !== undefined) item.tags = record.tags;
  if (record.metadata !== undefined) item.metadata = record.metadata;
  return item;
}

/** The error a results line recorded, as the error that writes it back the same (its location prefix is added again on writing). */
function errorOf(recorded: SerializedError | undefined): RubricateError {
  if (!recorded) return new RubricateError('INPUT_INVALID', 'invalid input record');
  const code: ErrorCode = Object.hasOwn(errorCodes, recorded.code) ? recorded.code : 'INPUT_INVALID';
  const details = recorded.details ?? {};
  const location = formatLocation(details);
  const message = location && recorded.message.startsWith(`${location}: `) ? recorded.message.slice(location.length + 2) : recorded.message;
  return new RubricateError(code, message, details);
}

/**
 * Streams a results file as items to grade again, each with its line. An unreadable line, a
 * line that was already invalid, and a line that cannot be rebuilt come through as `invalid`
 * records naming file, line and field; the input line number is the one the results recorded.
 */
export async function* readResultsAsItems(file: string, options: Pick<ImportOptions, 'rubrics'> = {}): AsyncGenerator<RegradeRecord> {
  for await (const entry of readResults(file)) {
    if (entry.kind === 'invalid') {
      yield { record: entry };
      continue;
    }
    const previous = entry.record;
    const line = previous.line ?? entry.line;
    if (previous.status === 'invalid') {
      // Invalid in the first run: it stays invalid, with its own reason, in its place.
      yield { record: { kind: 'invalid', line, error: errorOf(previous.error), ...(previous.id !== '' ? { id: previous.id } : {}) }, previous };
      continue;
    }
    const item = itemOf(previous, options.rubrics);
    if ('reason' in item) {
      yield { record: { kind: 'invalid', line, id: previous.id, error: new RubricateError('INPUT_INVALID', `results line cannot be graded again: ${item.reason}`, { file, line: entry.line, field: item.field }) } };
      continue;
    }
    yield { record: { kind: 'item', item, line }, previous };
  }
}

/** `grade --format results`: the responses of a results file graded again (see `rubricate rejudge`). */
export const resultsItemImporter: Importer = {
  name: 'results',
  accepts: ['rubrics'],
  description: 'rubricate results JSONL graded again (rubricate rejudge); the rubric rebuilt from each line, or from --rubrics FILE by rubric_id',
  async *read(file, options): AsyncGenerator<ImportRecord> {
    for await (const { record } of readResultsAsItems(file, options)) yield record;
  },
};
