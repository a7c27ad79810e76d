/**
 * Request bodies: read up to a byte limit (413 beyond it, decided from Content-Length when
 * the client sends one, else while streaming), then parsed without ever throwing on bad
 * JSON. Under @hono/node-server the Node request stream is read directly, which skips the
 * web-stream conversion on the hot path.
 */
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { RubricateError } from '../errors.js';
import { parseInputJson } from '../util/json.js';
import { contentTypeRefusal } from './content-type.js';

export const defaultMaxBodyBytes = 16 * 1024 * 1024;

function tooLarge(limit: number): RubricateError {
  return new RubricateError('INPUT_INVALID', `request body is larger than ${limit} bytes (--max-body-bytes)`, { field: 'body', httpStatus: 413 });
}

/**
 * A request header. Under @hono/node-server it is read from Node's already parsed headers:
 * `context.req.header()` would first build a fetch Headers object from the raw headers.
 */
export function requestHeader(context: Context, name: string): string | undefined {
  const incoming = nodeRequestOf(context);
  if (incoming) {
    const value = incoming.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  }
  return context.req.header(name);
}

function nodeRequestOf(context: Context): IncomingMessage | undefined {
  const incoming = (context.env as { incoming?: unknown } | undefined)?.incoming;
  return incoming && typeof (incoming as IncomingMessage).on === 'function' ? (incoming as IncomingMessage) : undefined;
}

function readNodeStream(incoming: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const cleanup = () => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('aborted', onAborted);
    };
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total > limit) {
        cleanup();
        // Stop reading; the answer is sent and the connection closed after it.
        incoming.pause();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(new RubricateError('INPUT_INVALID', `could not read the request body: ${error.message}`, { field: 'body' }));
    };
    const onAborted = () => onError(new Error('the client went away'));
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('aborted', onAborted);
  });
}

async function readWebStream(stream: ReadableStream<Uint8Array>, limit: number): Promise<Buffer> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total);
}

/** The request body as parsed JSON, or an INPUT_INVALID / 413 error. */
export async function readJsonBody(context: Context, limit: number): Promise<unknown> {
  // Cross-site pages can post text/plain (or untyped) bodies without a preflight: JSON endpoints take JSON only.
  const refusal = contentTypeRefusal(requestHeader(context, 'content-type'));
  if (refusal) throw refusal;
  const declared = requestHeader(context, 'content-length');
  if (declared !== undefined && Number(declared) > limit) {
    context.header('Connection', 'close');
    throw tooLarge(limit);
  }
  let bytes: Buffer;
  try {
    const incoming = nodeRequestOf(context);
    if (incoming && !incoming.readableEnded) bytes = await readNodeStream(incoming, limit);
    else {
      const stream = context.req.raw.body;
      bytes = stream ? await readWebStream(stream, limit) : Buffer.alloc(0);
    }
  } catch (error) {
    if (RubricateError.isInstance(error) && error.details.httpStatus === 413) context.header('Connection', 'close');
    throw error;
  }
  if (bytes.length === 0) throw new RubricateError('INPUT_INVALID', 'request body is empty (expected a JSON object)', { field: 'body' });
  // Nesting is bounded before parsing: a deep body is a 400, never a stack overflow.
  const parsed = parseInputJson(bytes.toString('utf8'));
  if (!parsed.ok) throw new RubricateError('INPUT_INVALID', parsed.error.startsWith('nested deeper') ? `request body is ${parsed.error}` : `request body is not valid JSON: ${parsed.error}`, { field: 'body' });
  return parsed.value;
}
