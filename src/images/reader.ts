/**
 * The image files and URLs of the records a run reads, loaded to bytes before the record is
 * normalised (which decodes data URLs only). One reader per run holds its rules: which
 * folders paths may name, whether URLs may reach private addresses, Ctrl-C, and whether
 * anything is read at all (a dry run fetches no URL; counting records reads nothing). It
 * counts what it read, for the dry run's estimate.
 */
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { RubricateError } from '../errors.js';
import { fetchImageBytes } from './fetch.js';
import { imageFolder, readImageFile, type ImageFolder } from './files.js';
import { imageError, imageUrls, isDataUrl, isRemoteUrl, maxImageBytes } from './images.js';

/**
 * `read`: files read and URLs fetched. `dry-run`: files read; URLs counted, not fetched, each
 * planned as a stand-in image. `none`: nothing read (an item naming a file or URL is invalid).
 */
export type ImageReading = 'read' | 'dry-run' | 'none';

export interface ImageReaderOptions {
  /** Folders, besides each input file's own, that image paths may name (`--image-root`). */
  roots?: readonly string[];
  /** Image URLs may reach loopback, private, link-local… addresses (`--allow-private-image-urls`). */
  allowPrivateAddresses?: boolean;
  /** Default `read`. */
  reading?: ImageReading;
  /** Ctrl-C: a fetch under way stops at once. */
  signal?: AbortSignal;
}

const pngSignature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export class ImageReader {
  /** Image files read. */
  files = 0;
  /** Image URLs fetched (in a dry run: that a run would fetch). */
  urls = 0;
  private readonly inputFolders = new Map<string, Promise<ImageFolder>>();

  private constructor(
    private readonly options: ImageReaderOptions,
    private readonly roots: readonly ImageFolder[],
  ) {}

  /** A reader; each `--image-root` must be an existing folder. */
  static async open(options: ImageReaderOptions = {}): Promise<ImageReader> {
    const roots = await Promise.all(
      (options.roots ?? []).map(async (root) => {
        const folder = await imageFolder(root).catch(() => undefined);
        if (!folder || !(await stat(folder.real)).isDirectory()) throw new RubricateError('CONFIG_INVALID', `--image-root "${root}" is not a folder`, { field: 'image-root' });
        return folder;
      }),
    );
    return new ImageReader(options, roots);
  }

  get reading(): ImageReading {
    return this.options.reading ?? 'read';
  }

  /** The same rules, reading as `reading` says (its counts are its own). */
  withReading(reading: ImageReading): ImageReader {
    return new ImageReader({ ...this.options, reading }, this.roots);
  }

  /** Bytes of each image file and URL of a raw record (data URLs are left to normalising), once per url. */
  async read(record: unknown, location: { file?: string; line?: number }): Promise<Map<string, Buffer>> {
    const loaded = new Map<string, Buffer>();
    if (this.reading === 'none') return loaded;
    for (const { url, field } of imageUrls(record)) {
      if (isDataUrl(url) || loaded.has(url)) continue;
      const at = { ...location, field };
      if (isRemoteUrl(url)) {
        this.urls += 1;
        // A dry run plans the item's calls on a stand-in, one per URL: its placeholder text is the same size, and the URL is never fetched.
        const bytes = this.reading === 'dry-run' ? Buffer.concat([pngSignature, createHash('sha256').update(url).digest()]) : await fetchImageBytes(url, at, { allowPrivateAddresses: this.options.allowPrivateAddresses, signal: this.options.signal });
        loaded.set(url, bytes);
      } else if (/^[a-z][a-z0-9+.-]+:/i.test(url) && !/^file:/i.test(url)) {
        throw imageError(`image URL scheme "${url.slice(0, url.indexOf(':'))}:" is not read (data:, http(s): and file paths are)`, at);
      } else {
        loaded.set(url, await readImageFile(url, at, [await this.inputFolder(location.file), ...this.roots], maxImageBytes));
        this.files += 1;
      }
    }
    return loaded;
  }

  private inputFolder(file: string | undefined): Promise<ImageFolder> {
    const folder = file ? path.dirname(path.resolve(file)) : process.cwd();
    let found = this.inputFolders.get(folder);
    if (!found) this.inputFolders.set(folder, (found = imageFolder(folder)));
    return found;
  }
}
