import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { runCli } from '../cli/main.js';
import { exitCodes, RubricateError } from '../errors.js';
import type { Judge } from '../judges/types.js';
import { Grader } from '../pipeline/grader.js';
import { normalizeItem } from '../rubric/normalize.js';
import type { FakeJudgeScript } from '../testing/fake-judge.js';
import { solidPng, stripesPng } from '../testing/png.js';
import { test } from '../testing/vitest-fixtures.js';

const red: [number, number, number] = [255, 0, 0];
const blue: [number, number, number] = [0, 0, 255];
const green: [number, number, number] = [0, 160, 0];
const images = {
  red: solidPng(16, 16, red),
  blue: solidPng(24, 12, blue),
  flag: stripesPng(30, 20, [red, [255, 255, 255], blue]),
  greenSquare: solidPng(8, 8, green),
};
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const colourOf = Object.fromEntries(Object.entries(images).map(([name, bytes]) => [sha(bytes), name]));

/** A vision judge whose verdict is whether the attached bytes show the colour the criterion names; the hashes of each call's images go to `received`. */
function colourJudge(received: string[][]): FakeJudgeScript {
  return (request) => {
    // The fake reads the image parts of the request as OpenAI does: data URLs in image_url parts.
    const messages = request.body.messages as Array<{ content: unknown }>;
    const hashes: string[] = [];
    for (const message of messages) {
      if (!Array.isArray(message.content)) continue;
      for (const part of message.content as Array<{ type: string; image_url?: { url: string } }>) {
        if (part.type !== 'image_url') continue;
        const match = /^data:(image\/png);base64,(.+)$/.exec(part.image_url!.url);
        hashes.push(match ? sha(Buffer.from(match[2], 'base64')) : `not a PNG data URL: ${part.image_url!.url.slice(0, 30)}`);
      }
    }
    received.push(hashes);
    // Verdict: the criterion names the colour the image shows; met when the attached bytes are that image.
    const criterion = request.criteria[0];
    const wanted = /shows (\w+)/.exec(criterion.text)?.[1];
    const met = hashes.some((hash) => colourOf[hash] === wanted);
    return { content: { explanation: `Images received: ${hashes.map((hash) => colourOf[hash] ?? 'unknown').join(', ')}.`, criteria_met: met } };
  };
}

const dataUrl = (bytes: Buffer) => `data:image/png;base64,${bytes.toString('base64')}`;
const rubric = (colour: string) => ({ criteria: [{ id: 'shows', text: `The image in the response shows ${colour}.` }] });

describe('image items', () => {
  test('round-trip to an OpenAI-compatible judge with the exact bytes, from files (relative to the input) and data URLs', async ({ startJudge, tempDir }) => {
    const received: string[][] = [];
    const fake = await startJudge(colourJudge(received));
    await writeFile(path.join(tempDir, 'red.png'), images.red);
    await writeFile(path.join(tempDir, 'flag.png'), images.flag);
    const input = path.join(tempDir, 'items.jsonl');
    const items = [
      { id: 'file', prompt: [{ role: 'user', content: [{ type: 'text', text: 'Draw a red square.' }] }], response: [{ type: 'text', text: 'Here it is:' }, { type: 'image_url', image_url: { url: 'red.png' } }], rubric: rubric('red') },
      { id: 'data', prompt: 'Draw a blue rectangle.', response: [{ type: 'image_url', image_url: { url: dataUrl(images.blue) } }], rubric: rubric('blue') },
      { id: 'prompt-image', prompt: [{ role: 'user', content: [{ type: 'text', text: 'Describe this flag.' }, { type: 'image_url', image_url: { url: './flag.png' } }] }], response: 'Red, white and blue stripes.', reference: [{ type: 'image_url', image_url: { url: dataUrl(images.greenSquare) } }], rubric: rubric('flag') },
      { id: 'wrong', prompt: 'Draw a red square.', response: [{ type: 'image_url', image_url: { url: dataUrl(images.blue) } }], rubric: rubric('red') },
      { id: 'missing', prompt: 'x', response: [{ type: 'image_url', image_url: { url: 'nope.png' } }], rubric: rubric('red') },
    ];
    await writeFile(input, `${items.map((item) => JSON.stringify(item)).join('\n')}\n`);
    const out = path.join(tempDir, 'results.jsonl');
    const stderr: string[] = [];
    const code = await runCli(['grade', '--input', input, '--out', out, '--judge', 'openai:vision', '--judge-base-url', fake.baseUrl, '--judge-api-key', 'test', '--cache', path.join(tempDir, 'cache.sqlite'), '--quiet'], {
      stdout: () => {},
      stderr: (text) => stderr.push(text),
      signal: new AbortController().signal,
    });
    expect(code).toBe(exitCodes.itemsFailed);
    const results = (await readFile(out, 'utf8')).trim().split('\n').map((line) => JSON.parse(line));
    const byId = Object.fromEntries(results.map((result) => [result.id, result]));
    expect(byId.file.criteria[0].met).toBe(true);
    expect(byId.data.criteria[0].met).toBe(true);
    expect(byId['prompt-image'].criteria[0].met).toBe(true);
    expect(byId.wrong.criteria[0].met).toBe(false);
    expect(byId.missing.status).toBe('invalid');
    expect(byId.missing.error.message).toMatch(/image file "nope.png" not found/);
    // Every byte arrived: each call carried exactly the item's images, as generated.
    expect(received).toContainEqual([sha(images.red)]);
    expect(received).toContainEqual([sha(images.blue)]);
    expect(received).toContainEqual([sha(images.flag), sha(images.greenSquare)]);
    // The placeholder (and so the cache key) names the bytes' hash.
    expect(byId.file.response).toContain(`sha256 ${sha(images.red).slice(0, 16)}`);
  });

  test('validates image parts at the edge and refuses a judge that cannot take images', async () => {
    const error = (record: unknown) => {
      try {
        normalizeItem(record, { file: 'in.jsonl', line: 2 });
      } catch (caught) {
        return caught as RubricateError;
      }
      throw new Error('expected an error');
    };
    expect(error({ id: 1, prompt: 'p', response: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,aGVsbG8=' } }], rubric: rubric('red') }).details).toMatchObject({ field: 'response[0].image_url.url', line: 2 });
    expect(error({ id: 1, prompt: 'p', response: [{ type: 'input_audio', text: 'x' }], rubric: rubric('red') }).details?.field).toBe('response[0].type');
    expect(error({ id: 1, prompt: 'p', response: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }], rubric: rubric('red') }).message).toMatch(/only data URLs are accepted/);

    const item = normalizeItem({ id: 'img', prompt: 'p', response: [{ type: 'image_url', image_url: { url: dataUrl(images.red) } }], rubric: rubric('red') });
    expect(item.images).toHaveLength(1);
    let called = false;
    const textOnly: Judge = {
      provenance: { id: 'text-only', model: 'text-only' },
      capabilities: { images: false },
      async complete() {
        called = true;
        return { text: '{"explanation":"x","criteria_met":true}', usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 } };
      },
    };
    const result = await new Grader({ judge: textOnly, calls: { maxAttempts: 1 } }).gradeItem(item);
    expect(called).toBe(false);
    expect(result.status).toBe('error');
    expect(result.criteria[0].error).toMatchObject({ code: 'JUDGE_REQUEST_REJECTED' });
    expect(result.criteria[0].error!.message).toMatch(/does not accept images/);
  });
});
