/**
 * Images in items: OpenAI-style content parts `{type: "image_url", image_url: {url}}` whose
 * url is a data URL, an http(s) URL or a local file path (relative to the input file).
 * Each is loaded to bytes at the edge, checked against a size limit and a known image type,
 * and identified by the sha256 of its bytes, which is what the judge prompt (and so every
 * cache key) names. Judges that accept images receive the bytes; the others refuse the
 * item with a clear error. Nothing is dropped silently.
 *
 * Normalising an item decodes data URLs only. Files and URLs are untrusted input, read
 * before (asynchronously, under the rules of `ImageReader` in `reader.ts`) by the CLI's
 * importer; everywhere else (the HTTP server, the library) they are refused.
 */
import { RubricateError } from '../errors.js';
import { createHash } from 'node:crypto';
import { redactText } from '../util/redact.js';

/** Largest image accepted (OpenAI's and Anthropic's per-image limits are 20 MB and 5 MB; this is the wider bound). */
export const maxImageBytes = 20 * 1024 * 1024;

export type ImagePlace = 'prompt' | 'reference' | 'response';

export interface ItemImage {
  /** Where the image appeared; `index` is its 1-based number in the item, used in the text as [image N]. */
  place: ImagePlace;
  index: number;
  mediaType: string;
  /** Base64 of the bytes. */
  data: string;
  sha256: string;
  bytes: number;
  /** The url as written (data URLs shortened), for results and reports. */
  source: string;
}

/** The image a judge receives: bytes and type, named by hash. */
export interface JudgeImage {
  mediaType: string;
  data: string;
  sha256: string;
}

const signatures: Array<{ mediaType: string; test: (bytes: Buffer) => boolean }> = [
  { mediaType: 'image/png', test: (bytes) => bytes.length > 8 && bytes.readUInt32BE(0) === 0x89504e47 && bytes.readUInt32BE(4) === 0x0d0a1a0a },
  { mediaType: 'image/jpeg', test: (bytes) => bytes.length > 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff },
  { mediaType: 'image/gif', test: (bytes) => bytes.length > 6 && /^GIF8[79]a$/.test(bytes.subarray(0, 6).toString('latin1')) },
  { mediaType: 'image/webp', test: (bytes) => bytes.length > 12 && bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP' },
];

/** The image type from the bytes themselves (a declared type that disagrees is not trusted). */
export function sniffImageType(bytes: Buffer): string | undefined {
  return signatures.find((signature) => signature.test(bytes))?.mediaType;
}

export interface ImageLocation {
  file?: string;
  line?: number;
  field: string;
}

export function imageError(message: string, location: ImageLocation): RubricateError {
  return new RubricateError('INPUT_INVALID', message, { file: location.file, line: location.line, field: location.field });
}

export function isRemoteUrl(url: string): boolean {
  return /^https?:\/\//i.test(url);
}

export function isDataUrl(url: string): boolean {
  return url.startsWith('data:');
}

/**
 * The one answer for an image part that is not a data URL where nothing else is read (the
 * HTTP server): the same whatever the url names, so it tells nothing about the files there.
 */
export const onlyDataUrls = 'only data URLs are accepted for images here (data:image/png;base64,…): image files and http(s) URLs are not read';

/** Bytes of a data URL. */
export function dataUrlBytes(url: string, location: ImageLocation): Buffer {
  const match = /^data:([^;,]*)(;base64)?,(.*)$/s.exec(url);
  if (!match) throw imageError('image data URL is malformed (expected data:<type>;base64,<data>)', location);
  return match[2] ? Buffer.from(match[3], 'base64') : Buffer.from(decodeURIComponent(match[3]), 'latin1');
}

/** The image urls of a raw item record, with the field each sits at (prompt, response and reference parts). */
export function imageUrls(record: unknown): Array<{ url: string; field: string }> {
  const found: Array<{ url: string; field: string }> = [];
  if (record === null || typeof record !== 'object') return found;
  const parts = (value: unknown, field: string) => {
    if (!Array.isArray(value)) return;
    value.forEach((part, index) => {
      const url = (part as { image_url?: { url?: unknown } } | null)?.image_url?.url;
      if (typeof url === 'string') found.push({ url, field: `${field}[${index}].image_url.url` });
    });
  };
  const { prompt, response, reference } = record as { prompt?: unknown; response?: unknown; reference?: unknown };
  if (Array.isArray(prompt)) prompt.forEach((message, index) => parts((message as { content?: unknown } | null)?.content, `prompt[${index}].content`));
  parts(response, 'response');
  parts(reference, 'reference');
  return found;
}

/** Validates bytes (size, type) into an ItemImage. */
export function toItemImage(bytes: Buffer, url: string, place: ImagePlace, index: number, location: ImageLocation): ItemImage {
  if (bytes.length === 0) throw imageError('image is empty', location);
  if (bytes.length > maxImageBytes) throw imageError(`image is ${bytes.length} bytes, over the ${maxImageBytes}-byte limit`, location);
  const mediaType = sniffImageType(bytes);
  if (!mediaType) throw imageError('not a PNG, JPEG, GIF or WebP image', location);
  return { place, index, mediaType, data: bytes.toString('base64'), sha256: createHash('sha256').update(bytes).digest('hex'), bytes: bytes.length, source: url.startsWith('data:') ? `${url.slice(0, 40)}…` : redactText(url) };
}

/** The text that stands for an image in the judge prompt (and so in cache keys): its number, type and bytes' hash. */
export function imagePlaceholder(image: Pick<ItemImage, 'index' | 'mediaType' | 'sha256' | 'bytes'>): string {
  return `[image ${image.index}: ${image.mediaType}, ${image.bytes} bytes, sha256 ${image.sha256.slice(0, 16)}; attached]`;
}

export function judgeImage(image: ItemImage): JudgeImage {
  return { mediaType: image.mediaType, data: image.data, sha256: image.sha256 };
}

/** data URL of an image, the form OpenAI-compatible servers take. */
export function imageDataUrl(image: JudgeImage): string {
  return `data:${image.mediaType};base64,${image.data}`;
}

/**
 * An image as a results line records it: where it stood, its type, size and hash, and its
 * bytes (base64) up to `resultImageDataLimit`, so a report can show the image itself.
 */
export interface ResultImage {
  index: number;
  place: ImagePlace;
  media_type: string;
  bytes: number;
  sha256: string;
  /** The url as written (data URLs shortened, credentials redacted). */
  source: string;
  /** Base64 of the bytes; absent when the image is over `resultImageDataLimit`. */
  data?: string;
}

/** Largest image whose bytes a results line keeps (larger ones keep type, size and hash only). */
export const resultImageDataLimit = 5 * 1024 * 1024;

export function resultImage(image: ItemImage): ResultImage {
  const record: ResultImage = { index: image.index, place: image.place, media_type: image.mediaType, bytes: image.bytes, sha256: image.sha256, source: redactText(image.source) };
  if (image.bytes <= resultImageDataLimit) record.data = image.data;
  return record;
}
