/**
 * Listening and closing, alike for every loopback fake server: a free loopback port unless told
 * otherwise, an origin that brackets an IPv6 host, and a close that drops open connections first
 * (a hanging request or a keep-alive socket never holds a test's teardown).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A server that reads each request's whole body, unbounded (the fakes of one provider's API), then hands it to `handle`. */
export function wholeBodyServer(handle: (incoming: http.IncomingMessage, body: Buffer, outgoing: http.ServerResponse) => Promise<void>): http.Server {
  return http.createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => void handle(incoming, Buffer.concat(chunks), outgoing));
  });
}

/** Starts `server` listening and returns its origin (`http://host:port`). */
export async function listenFake(server: http.Server, host = '127.0.0.1', port = 0): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const address = server.address() as AddressInfo;
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

/** Closes `server`, its open connections first. */
export async function closeFake(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
