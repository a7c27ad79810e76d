/**
 * Reading an image file an item names. The items file is untrusted, so a path may name only
 * a regular file inside the folders allowed (the input file's own, and `--image-root`
 * folders), checked on the path as written and again once `..` and symlinks are resolved.
 * Nothing else is opened: a FIFO, a device or a folder is refused from its `stat`, the size
 * bound applies before any byte is read, and every read is asynchronous, so a file can
 * neither hang the run nor keep Ctrl-C from being heard.
 */
import { constants } from 'node:fs';
import { open, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { imageError, type ImageLocation } from './images.js';

/** A folder image paths may name: its absolute path as given, and with its symlinks resolved. */
export interface ImageFolder {
  path: string;
  real: string;
}

export async function imageFolder(folder: string): Promise<ImageFolder> {
  const absolute = path.resolve(folder);
  return { path: absolute, real: await realpath(absolute) };
}

function isInside(file: string, folder: string): boolean {
  const relative = path.relative(folder, file);
  return relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative);
}

/**
 * The bytes of the image file `url` names (a path relative to the input file, an absolute
 * path or a `file:` URL), if it is a regular file of at most `maxBytes` inside `folders`.
 */
export async function readImageFile(url: string, location: ImageLocation, folders: readonly ImageFolder[], maxBytes: number): Promise<Buffer> {
  let written = url;
  if (/^file:/i.test(url)) {
    try {
      written = fileURLToPath(url);
    } catch {
      throw imageError(`image URL "${url}" is not a file URL of this machine`, location);
    }
  }
  const base = location.file ? path.dirname(path.resolve(location.file)) : process.cwd();
  const absolute = path.resolve(base, written);
  const outside = () => imageError(`image file "${url}" is outside the input file's folder: refused (--image-root DIR allows another folder)`, location);
  // Refused before the disk is touched, so the answer says nothing about what exists outside.
  if (!folders.some((folder) => isInside(absolute, folder.path) || isInside(absolute, folder.real))) throw outside();
  let real: string;
  try {
    real = await realpath(absolute);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw imageError(`image file "${url}" ${code === 'ENOENT' ? 'not found' : `cannot be read (${code ?? (error as Error).message})`} (paths are relative to the input file)`, location);
  }
  if (!folders.some((folder) => isInside(real, folder.real))) throw outside();
  const notRegular = () => imageError(`image file "${url}" is not a regular file (a folder, FIFO or device): refused`, location);
  const tooLarge = (size: number) => imageError(`image file "${url}" is ${size} bytes, over the ${maxBytes}-byte limit`, location);
  const info = await stat(real);
  if (!info.isFile()) throw notRegular();
  if (info.size > maxBytes) throw tooLarge(info.size);
  // Non-blocking and not through a symlink: a file swapped for a FIFO or a link since the checks is not waited on.
  const handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW).catch((error: NodeJS.ErrnoException) => {
    throw imageError(`image file "${url}" cannot be read (${error.code ?? error.message})`, location);
  });
  try {
    const opened = await handle.stat();
    if (!opened.isFile()) throw notRegular();
    if (opened.size > maxBytes) throw tooLarge(opened.size);
    // One byte more than its size, so a file that grew since its stat is caught, not cut short.
    const buffer = Buffer.alloc(opened.size + 1);
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    if (filled > opened.size) throw imageError(`image file "${url}" grew while it was read: refused`, location);
    return buffer.subarray(0, filled);
  } finally {
    await handle.close();
  }
}
