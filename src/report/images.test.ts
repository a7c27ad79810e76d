import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { solidPng } from '../testing/png.js';
import { ReportImageEmbedder } from './images.js';

const png = solidPng(10, 10, [0, 128, 255]);
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const record = (bytes: Buffer, extra: Record<string, unknown> = {}) => ({ index: 1, place: 'response', media_type: 'image/png', bytes: bytes.length, sha256: sha(bytes), source: 'a.png', data: bytes.toString('base64'), ...extra });

describe('images a report embeds', () => {
  it('embeds the bytes of a results line as a data URL after checking their hash and type', () => {
    const image = new ReportImageEmbedder().image(record(png))!;
    expect(image.omitted).toBeUndefined();
    expect(image.dataUrl).toBe(`data:image/png;base64,${png.toString('base64')}`);
  });

  it('gives a placeholder with the reason for an image over the cap, over the budget, altered, not an image, or without bytes', () => {
    expect(new ReportImageEmbedder(png.length - 1).image(record(png))!.omitted).toMatch(/over the report's per-image limit of \d+ bytes/);
    const budget = new ReportImageEmbedder(png.length, png.length * 2);
    expect(budget.image(record(png))!.dataUrl).toBeDefined();
    expect(budget.image(record(png))!.dataUrl).toBeDefined();
    expect(budget.image(record(png))!.omitted).toMatch(/image budget .* is spent/);
    const altered = Buffer.from(png);
    altered[altered.length - 20] ^= 1;
    expect(new ReportImageEmbedder().image({ ...record(png), data: altered.toString('base64') })!.omitted).toMatch(/do not match the image's sha256/);
    const text = Buffer.from('not an image at all');
    expect(new ReportImageEmbedder().image(record(text))!.omitted).toMatch(/not a PNG, JPEG, GIF or WebP/);
    const withoutBytes = new ReportImageEmbedder().image(record(png, { data: undefined }))!;
    expect(withoutBytes.omitted).toMatch(/keep no bytes/);
    expect(withoutBytes.dataUrl).toBeUndefined();
    expect(new ReportImageEmbedder().image({ nonsense: true })).toBeNull();
  });
});
