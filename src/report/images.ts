/**
 * Images a report shows: the bytes a results line keeps, checked against their sha256 and
 * their type, embedded as data URLs (the report is one self-contained file) under a size cap
 * per image and per report. An image left out gets a placeholder that says why.
 */
import { createHash } from 'node:crypto';
import { sniffImageType } from '../images/images.js';
import type { ReportImage } from './types.js';

/** Largest image embedded in a report (bytes). */
export const defaultReportImageBytes = 2 * 1024 * 1024;
/** Largest total of images embedded in one report (bytes); later images get a placeholder. */
export const defaultReportImageTotalBytes = 50 * 1024 * 1024;

function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** Embeds images while the per-image and total caps allow. */
export class ReportImageEmbedder {
  private embedded = 0;

  constructor(
    private readonly maxImageBytes = defaultReportImageBytes,
    private readonly maxTotalBytes = defaultReportImageTotalBytes,
  ) {}

  /** The page's view of one entry of a results line's `images` (null when the entry is not an image record). */
  image(entry: unknown): ReportImage | null {
    if (entry === null || typeof entry !== 'object') return null;
    const record = entry as Record<string, unknown>;
    if (typeof record.index !== 'number' || typeof record.sha256 !== 'string') return null;
    const declaredBytes = typeof record.bytes === 'number' ? record.bytes : 0;
    const image: ReportImage = {
      index: record.index,
      place: typeof record.place === 'string' ? record.place : 'response',
      mediaType: typeof record.media_type === 'string' ? record.media_type : 'unknown type',
      bytes: declaredBytes,
      sha256: record.sha256,
    };
    if (typeof record.data !== 'string') {
      image.omitted = 'the results keep no bytes for this image (images over 5 MB, or results written without text)';
      return image;
    }
    // Checked before anything else: the caps must hold however large the results claim the image is.
    const decodedLength = Math.floor((record.data.length * 3) / 4);
    if (decodedLength > this.maxImageBytes + 3) {
      image.omitted = `${sizeText(declaredBytes || decodedLength)} is over the report's per-image limit of ${sizeText(this.maxImageBytes)}`;
      return image;
    }
    const bytes = Buffer.from(record.data, 'base64');
    image.bytes = bytes.length;
    if (bytes.length > this.maxImageBytes) {
      image.omitted = `${sizeText(bytes.length)} is over the report's per-image limit of ${sizeText(this.maxImageBytes)}`;
      return image;
    }
    if (createHash('sha256').update(bytes).digest('hex') !== record.sha256) {
      image.omitted = 'the bytes in the results do not match the image\'s sha256';
      return image;
    }
    const mediaType = sniffImageType(bytes);
    if (!mediaType) {
      image.omitted = 'the bytes in the results are not a PNG, JPEG, GIF or WebP image';
      return image;
    }
    if (this.embedded + bytes.length > this.maxTotalBytes) {
      image.omitted = `the report's image budget of ${sizeText(this.maxTotalBytes)} is spent`;
      return image;
    }
    this.embedded += bytes.length;
    image.mediaType = mediaType;
    image.dataUrl = `data:${mediaType};base64,${bytes.toString('base64')}`;
    return image;
  }
}
