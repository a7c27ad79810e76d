import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { RubricateError } from '../errors.js';

export interface NumberedLine {
  /** 1-based line number. */
  line: number;
  text: string;
}

/**
 * Streams the lines of a text file with their numbers; never holds the file in memory.
 * Blank lines are skipped. A missing file is an INPUT_INVALID error naming it.
 */
export async function* readLines(file: string): AsyncGenerator<NumberedLine> {
  const stream = createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 16 });
  const opened = new Promise<void>((resolve, reject) => {
    stream.once('open', () => resolve());
    stream.once('error', (error: NodeJS.ErrnoException) =>
      reject(new RubricateError('INPUT_INVALID', error.code === 'ENOENT' ? 'file not found' : error.message, { file })),
    );
  });
  await opened;
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  let line = 0;
  try {
    for await (const text of lines) {
      line += 1;
      if (line === 1 && text.charCodeAt(0) === 0xfeff) {
        if (text.length > 1 && text.slice(1).trim() !== '') yield { line, text: text.slice(1) };
        continue;
      }
      if (text.trim() === '') continue;
      yield { line, text };
    }
  } finally {
    lines.close();
    stream.destroy();
  }
}
