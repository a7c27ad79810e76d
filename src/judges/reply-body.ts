/**
 * Reading a judge's HTTP answer with a size bound. A verdict is a few hundred bytes; a reply of
 * hundreds of megabytes is a misrouted endpoint or a hostile server, and buffering it whole
 * (times the calls in flight) would take gigabytes. The body is read until the bound, then the
 * connection is destroyed and the call fails with JUDGE_REPLY_TOO_LARGE (retried, then
 * reported, like any failed call). A Content-Length above the bound fails before any byte is read.
 */
import type { IncomingMessage } from 'node:http';
import { RubricateError } from '../errors.js';

/** Default bound on one judge reply: 8 MiB. */
export const defaultMaxReplyBytes = 8 * 1024 * 1024;

export function replyTooLarge(limit: number, endpoint: string, status: number | undefined, seen: number): RubricateError {
  return new RubricateError('JUDGE_REPLY_TOO_LARGE', `judge reply is larger than ${limit} bytes (read ${seen} so far; --max-reply-bytes)`, {
    endpoint,
    ...(status !== undefined ? { status } : {}),
    limit,
  });
}

/**
 * Collects the body of `incoming` up to `limit` bytes. `onError` maps a socket failure.
 * Resolves with the bytes, or rejects with JUDGE_REPLY_TOO_LARGE (the response is destroyed).
 */
export function readBoundedBody(incoming: IncomingMessage, limit: number, endpoint: string, onError: (error: Error) => RubricateError): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const status = incoming.statusCode;
    const declared = Number(incoming.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      incoming.destroy();
      reject(replyTooLarge(limit, endpoint, status, 0));
      return;
    }
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    incoming.on('data', (chunk: Buffer) => {
      if (settled) return;
      total += chunk.length;
      if (total > limit) {
        settled = true;
        chunks.length = 0;
        // Stop reading: the socket is not reused for a body we refuse to drain.
        incoming.destroy();
        reject(replyTooLarge(limit, endpoint, status, total));
        return;
      }
      chunks.push(chunk);
    });
    incoming.on('error', (error) => {
      if (settled) return;
      settled = true;
      reject(onError(error));
    });
    incoming.on('end', () => {
      if (settled) return;
      settled = true;
      // Most answers arrive in one chunk: skip the copy then.
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total));
    });
  });
}
