import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toScoredItem, type ResultRecord } from '../results/results.js';
import { getScoring } from '../scoring/registry.js';
import { compressionThresholdBytes, embedPayload, escapeHtml, readEmbeddedPayload, scriptSafeJson } from './encoding.js';
import { collectRun } from './collect.js';
import { rubricateChunkIndex, rubricateDecodeItem, rubricateReadEmbedded } from './client/decode.js';
import { buildReport } from './index.js';
import { syntheticResultRecords } from './synthetic.js';
import type { ResultsReportPayload, RunData, RunTexts } from './types.js';
import { test } from '../testing/vitest-fixtures.js';

let directory: string;
test.beforeAll(({ fileTempDir }) => {
  directory = fileTempDir;
});

/** The page's own decoder, run in Node: the module the report bundles. */
const clientDecoder = { readEmbedded: rubricateReadEmbedded, decodeItem: rubricateDecodeItem, chunkIndex: rubricateChunkIndex };

const hostile = '</script><script>alert(1)</script><!-- \u2028\u2029 & "quotes" \'single\' <b>bold</b> 🙂';

describe('scriptSafeJson', () => {
  it('leaves no character that could end or confuse a script element, and parses back to the same value', () => {
    const value = { text: hostile, nested: [hostile, { key: hostile }] };
    const json = scriptSafeJson(value);
    expect(json).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(json)).toEqual(value);
  });

  it('escapes HTML for the title', () => {
    expect(escapeHtml('<script>"x" & \'y\'</script>')).toBe('&#60;script&#62;&#34;x&#34; &#38; &#39;y&#39;&#60;/script&#62;');
  });
});

describe('embedPayload', () => {
  const value = { rows: Array.from({ length: 2000 }, (_, index) => ({ index, text: `${hostile} ${index}` })) };

  it('round-trips as plain JSON and as gzip + base64', () => {
    const plain = embedPayload(value, 'never');
    const packed = embedPayload(value, 'always');
    expect(plain.encoding).toBe('json');
    expect(packed.encoding).toBe('gzip-base64');
    expect(packed.text).toMatch(/^[A-Za-z0-9+/=]+$/);
    expect(packed.text.length).toBeLessThan(plain.text.length / 5);
    expect(readEmbeddedPayload(plain)).toEqual(value);
    expect(readEmbeddedPayload(packed)).toEqual(value);
  });

  it('compresses automatically only large payloads', () => {
    expect(embedPayload({ small: true }).encoding).toBe('json');
    const large = { text: 'x'.repeat(compressionThresholdBytes + 1) };
    expect(embedPayload(large).encoding).toBe('gzip-base64');
  });
});

function scoreOf(record: ResultRecord): number | null {
  return getScoring('healthbench').itemScore(toScoredItem(record));
}

/** What the page must show for a record: the results line, read back field by field. */
function expectedItem(record: ResultRecord, score: number | null) {
  return {
    id: record.id,
    status: record.status,
    score,
    gated: record.gated === true,
    tags: record.tags ?? [],
    line: expect.any(Number),
    rubric_id: record.rubric_id ?? null,
    criteria: record.criteria.map((criterion) => {
      const decoded: Record<string, unknown> = {
        id: criterion.id,
        text: criterion.text,
        points: criterion.points,
        tags: criterion.tags,
        kind: criterion.kind,
        source: criterion.source,
        status: criterion.status,
        met: criterion.met,
      };
      for (const key of ['value', 'label', 'probability', 'error', 'skip_reason', 'explanation'] as const) if (criterion[key] !== undefined) decoded[key] = criterion[key];
      return decoded;
    }),
    ...(record.error ? { error: { code: record.error.code, message: record.error.message } } : {}),
    prompt: record.prompt ?? [],
    response: record.response ?? null,
    reference: record.reference ?? null,
    metadata: record.metadata ? JSON.stringify(record.metadata, null, 2) : null,
  };
}

describe('report data round trip through the page decoder', () => {
  const records: ResultRecord[] = [...syntheticResultRecords({ items: 30, criteriaPerItem: 4, seed: 3, errorRate: 0.1 })];
  records[2] = {
    ...records[2],
    response: hostile,
    reference: `reference ${hostile}`,
    metadata: { prompt_id: 'p-2', note: hostile },
    prompt: [
      { role: 'system', content: 'Be careful.' },
      { role: 'user', content: hostile },
    ],
  };
  records[3].criteria[0] = { ...records[3].criteria[0], text: hostile, explanation: hostile, value: 0.5, label: 'Partially', probability: 0.61 };
  records[4] = { ...records[4], gated: true, score: 0 };
  records[4].criteria[1] = { ...records[4].criteria[1], status: 'skipped', met: null, skip_reason: 'a hard rule failed', explanation: undefined };
  delete records[5].prompt;
  delete records[5].response;
  records[6] = { id: 'bad-input', status: 'invalid', score: null, criteria: [], error: { code: 'INPUT_INVALID', message: 'rubric: a rubric needs at least one criterion' }, line: 7, rubricate_version: '0.1.0' };

  for (const compression of ['never', 'always'] as const) {
    it(`gives back every field of every item (${compression === 'never' ? 'plain JSON' : 'gzip + base64'})`, async () => {
      const file = join(directory, `round-trip-${compression}.jsonl`);
      writeFileSync(file, records.map((record) => JSON.stringify(record)).join('\n') + '\n');
      const document = await buildReport({ input: file });
      const payloadEmbedded = embedPayload(document.payload, compression);
      const payload = (await clientDecoder.readEmbedded(payloadEmbedded.encoding, payloadEmbedded.text)) as ResultsReportPayload;
      const run = payload.runs[0];
      expect(document.texts[0].length).toBe(1);
      const chunks: RunTexts[] = [];
      for (const chunk of document.texts[0]) {
        const embedded = embedPayload(chunk, compression);
        chunks.push((await clientDecoder.readEmbedded(embedded.encoding, embedded.text)) as RunTexts);
      }
      expect(run.items.ids).toHaveLength(records.length);
      records.forEach((record, index) => {
        const chunk = chunks[clientDecoder.chunkIndex(run, index)];
        const decoded = clientDecoder.decodeItem(run, chunk, index);
        expect(decoded).toEqual(expectedItem(record, scoreOf(record)));
      });
      // Without texts, the columns alone still give verdicts.
      const bare = clientDecoder.decodeItem(run, null, 3);
      expect(bare.response).toBeUndefined();
      expect(bare.criteria.map((criterion) => criterion.met)).toEqual(records[3].criteria.map((criterion) => criterion.met));
      expect(bare.criteria[0].explanation).toBeUndefined();
    });
  }

  it('keeps chunk-local indices right across chunk boundaries', async () => {
    const file = join(directory, 'chunked.jsonl');
    writeFileSync(file, records.map((record) => JSON.stringify(record)).join('\n') + '\n');
    const collected = await collectRun(file, { textChunkSize: 7 });
    const run = (await clientDecoder.readEmbedded('json', scriptSafeJson(collected.data))) as RunData;
    expect(collected.texts.map((chunk) => chunk.firstItem)).toEqual([0, 7, 14, 21, 28]);
    records.forEach((record, index) => {
      const decoded = clientDecoder.decodeItem(run, collected.texts[clientDecoder.chunkIndex(run, index)], index);
      expect(decoded).toEqual(expectedItem(record, scoreOf(record)));
    });
  });
});
