/**
 * Page code that turns the embedded columns back into records. It has no DOM access, so the
 * tests run this very source in Node (`new Function`) to check the encoding round-trips.
 * Plain ES2017 in a string: it ships inside the report as is.
 */
export const clientDecoderSource = String.raw`
var ITEM_STATUS_NAMES = ['ok', 'error', 'invalid'];
var CRITERION_STATUS_NAMES = ['ok', 'error', 'skipped'];

function rubricateInflate(base64) {
  var binary = atob(base64);
  var bytes = new Uint8Array(binary.length);
  for (var index = 0; index < binary.length; index += 1) bytes[index] = binary.charCodeAt(index);
  var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Response(stream).text();
}

/** Reads one embedded payload; resolves to the parsed value. */
function rubricateReadEmbedded(encoding, text) {
  if (encoding === 'gzip-base64') {
    if (typeof DecompressionStream === 'undefined') {
      return Promise.reject(new Error('This browser cannot decompress the report data (no DecompressionStream). Open the report in a current Chrome, Edge, Firefox or Safari.'));
    }
    return rubricateInflate(text).then(function (json) { return JSON.parse(json); });
  }
  return Promise.resolve(JSON.parse(text));
}

var rubricateSparseCache = new WeakMap();

/** Index of a flattened sparse list [key, v1, v2, key, v1, v2, …]: key → offset of its first value. */
function rubricateSparse(list, stride) {
  var cached = rubricateSparseCache.get(list);
  if (cached) return cached;
  var map = new Map();
  for (var offset = 0; offset < list.length; offset += stride) if (!map.has(list[offset])) map.set(list[offset], offset + 1);
  rubricateSparseCache.set(list, map);
  return map;
}

function rubricateExtras(run) {
  var cached = rubricateSparseCache.get(run.criteria.extras);
  if (cached) return cached;
  var map = new Map(run.criteria.extras);
  rubricateSparseCache.set(run.criteria.extras, map);
  return map;
}

function rubricateTags(run, tagSet) {
  if (tagSet < 0) return [];
  var references = run.tagSets[tagSet];
  var tags = new Array(references.length);
  for (var index = 0; index < references.length; index += 1) tags[index] = run.strings[references[index]];
  return tags;
}

function rubricateCriterionMet(flags) {
  var met = (flags >> 2) & 3;
  return met === 2 ? true : met === 1 ? false : null;
}

/** One criterion as in the results file; the explanation needs the text chunk of its item. */
function rubricateDecodeCriterion(run, chunk, position) {
  var columns = run.criteria;
  var flags = columns.flags[position];
  var criterion = {
    id: run.strings[columns.ids[position]],
    text: run.strings[columns.texts[position]],
    points: columns.points[position],
    tags: rubricateTags(run, columns.tagSets[position]),
    kind: (flags >> 5) & 1 ? 'hard_rule' : 'principle',
    source: (flags >> 4) & 1 ? 'check' : 'judge',
    status: CRITERION_STATUS_NAMES[flags & 3],
    met: rubricateCriterionMet(flags)
  };
  var extras = rubricateExtras(run).get(position);
  if (extras) {
    if (extras.value !== undefined) criterion.value = extras.value;
    if (extras.label !== undefined) criterion.label = extras.label;
    if (extras.probability !== undefined) criterion.probability = extras.probability;
    if (extras.error) criterion.error = { code: extras.error.code, message: extras.error.message };
    if (extras.skip_reason !== undefined) criterion.skip_reason = extras.skip_reason;
  }
  var explanation = chunk ? chunk.explanations[position - chunk.firstCriterion] : -1;
  if (explanation >= 0) criterion.explanation = chunk.strings[explanation];
  return criterion;
}

/** Index of the text chunk holding item index. */
function rubricateChunkIndex(run, index) {
  return Math.floor(index / run.textChunkSize);
}

/**
 * One item as in the results file: the fields a report shows. chunk is the item's text
 * chunk, or null to decode only the columns (texts then stay undefined).
 */
function rubricateDecodeItem(run, chunk, index) {
  var items = run.items;
  var item = {
    id: items.ids[index],
    status: ITEM_STATUS_NAMES[items.status[index]],
    score: items.scores[index],
    gated: (items.flags[index] & 1) === 1,
    tags: rubricateTags(run, items.tagSets[index]),
    line: items.lines[index],
    rubric_id: items.rubricIds[index] >= 0 ? run.strings[items.rubricIds[index]] : null,
    criteria: []
  };
  for (var position = items.criteriaOffsets[index]; position < items.criteriaOffsets[index + 1]; position += 1) {
    item.criteria.push(rubricateDecodeCriterion(run, chunk, position));
  }
  var errorOffset = rubricateSparse(items.errors, 3).get(index);
  if (errorOffset !== undefined) {
    item.error = { code: run.strings[items.errors[errorOffset]], message: chunk ? chunk.strings[items.errors[errorOffset + 1]] : null };
  }
  if (chunk) {
    var local = index - chunk.firstItem;
    var flattened = chunk.prompts[local] || [];
    item.prompt = [];
    for (var turn = 0; turn < flattened.length; turn += 2) item.prompt.push({ role: chunk.strings[flattened[turn]], content: chunk.strings[flattened[turn + 1]] });
    item.response = chunk.responses[local] >= 0 ? chunk.strings[chunk.responses[local]] : null;
    var referenceOffset = rubricateSparse(chunk.references, 2).get(index);
    item.reference = referenceOffset !== undefined ? chunk.strings[chunk.references[referenceOffset]] : null;
    var metadataOffset = rubricateSparse(chunk.metadata, 2).get(index);
    item.metadata = metadataOffset !== undefined ? chunk.strings[chunk.metadata[metadataOffset]] : null;
  }
  return item;
}
`;
