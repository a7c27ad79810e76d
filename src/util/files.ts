import { createWriteStream, mkdirSync, renameSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import { once } from 'node:events';
import { RubricateError } from '../errors.js';

/** Writes JSON lines with backpressure, so a fast producer never buffers a whole run in memory. */
export class JsonLinesWriter {
  private readonly stream: WriteStream;
  private failure: Error | undefined;

  constructor(readonly path: string) {
    try {
      mkdirSync(dirname(path), { recursive: true });
    } catch {
      // the open below reports the real problem
    }
    this.stream = createWriteStream(path, { encoding: 'utf8' });
    this.stream.on('error', (error) => {
      this.failure = error;
    });
  }

  async write(value: unknown): Promise<void> {
    if (this.failure) throw new RubricateError('CONFIG_INVALID', `cannot write ${this.path}: ${this.failure.message}`, { file: this.path });
    if (!this.stream.write(`${JSON.stringify(value)}\n`)) await once(this.stream, 'drain');
  }

  async close(): Promise<void> {
    if (this.stream.closed) return;
    this.stream.end();
    await once(this.stream, 'close');
    if (this.failure) throw new RubricateError('CONFIG_INVALID', `cannot write ${this.path}: ${this.failure.message}`, { file: this.path });
  }
}

/** Writes a whole file atomically (temp file + rename): readers never see half a file. */
export async function writeFileAtomic(path: string, contents: string): Promise<void> {
  const { writeFile } = await import('node:fs/promises');
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.tmp-${process.pid}`;
  await writeFile(temporary, contents, 'utf8');
  renameSync(temporary, path);
}
