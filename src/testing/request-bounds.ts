/**
 * What every loopback fake server (`rubricate fake-judge` is two of them) checks before it reads
 * a request: a Host that names loopback when it listens there (the rule of every loopback
 * service, `util/loopback-host.ts`), and a body within a bound, refused with 413 from its
 * announced length or as soon as the bytes received pass it, never buffered whole.
 */
import type http from 'node:http';
import { isLoopbackHostHeader, isLoopbackHostname } from '../util/loopback-host.js';

/** Largest request body a fake server reads by default (a batch input file of a few hundred thousand requests). */
export const defaultFakeMaxBodyBytes = 64 * 1024 * 1024;

export interface RequestBounds {
  /** Listening on loopback: only a loopback Host is answered. */
  loopbackOnly: boolean;
  maxBodyBytes: number;
}

/** The bounds of a fake server listening on `host`. */
export function requestBoundsFor(host: string, maxBodyBytes = defaultFakeMaxBodyBytes): RequestBounds {
  return { loopbackOnly: isLoopbackHostname(host.replace(/^\[|\]$/g, '')), maxBodyBytes };
}

function refuse(outgoing: http.ServerResponse, status: number, message: string): void {
  if (outgoing.headersSent) return;
  // The connection closes after the answer: node discards what is left of the body unread.
  outgoing.writeHead(status, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code: status === 413 ? 'request_too_large' : 'forbidden_host' } }));
}

/**
 * Calls `handle` with the request's whole body once it is in, if the request is within the
 * bounds; otherwise answers 403 (a foreign Host) or 413 (a body over the bound) and never calls it.
 */
export function receiveWithin(incoming: http.IncomingMessage, outgoing: http.ServerResponse, bounds: RequestBounds, handle: (body: Buffer) => unknown): void {
  const host = incoming.headers.host ?? '';
  if (bounds.loopbackOnly && !isLoopbackHostHeader(host)) {
    refuse(outgoing, 403, `Host "${host}" is not a loopback name: this server answers on loopback only`);
    return;
  }
  const tooLarge = `the request body is larger than ${bounds.maxBodyBytes} bytes (--max-body-bytes)`;
  const announced = incoming.headers['content-length'];
  if (announced !== undefined && Number(announced) > bounds.maxBodyBytes) {
    refuse(outgoing, 413, tooLarge);
    return;
  }
  const chunks: Buffer[] = [];
  let received = 0;
  let refused = false;
  incoming.on('data', (chunk: Buffer) => {
    if (refused) return;
    received += chunk.length;
    if (received > bounds.maxBodyBytes) {
      refused = true;
      chunks.length = 0;
      refuse(outgoing, 413, tooLarge);
      return;
    }
    chunks.push(chunk);
  });
  incoming.on('end', () => {
    if (!refused) handle(Buffer.concat(chunks));
  });
}
