/**
 * Binds the app to a port (@hono/node-server's request listener, behind the fast refusal path
 * of fast-refusal.ts) and shuts it down gracefully: stop accepting,
 * refuse new requests on open connections (503, Connection: close), let in-flight requests
 * finish, let grading abandoned at a deadline finish too (its verdicts go to the cache), then
 * close every connection.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { RubricateError } from '../errors.js';
import { createServerApp, type ServerAppOptions } from './app.js';
import { createFastRefusal } from './fast-refusal.js';
import type { ServerApp } from './context.js';
import { ServerState } from './state.js';

export interface StartServerOptions extends ServerAppOptions {
  /** 0 picks a free port. Default 8000. */
  port?: number;
  /** Default 127.0.0.1 (loopback); 0.0.0.0 to serve other machines. */
  host?: string;
  /** Longest a graceful close waits for in-flight work. Default 60 s. */
  drainTimeoutMs?: number;
}

export interface RunningServer {
  app: ServerApp;
  server: Server;
  state: ServerState;
  host: string;
  port: number;
  url: string;
  /** Graceful shutdown; `drained` is false when the drain timeout cut work short. */
  close(options?: { drainTimeoutMs?: number }): Promise<{ drained: boolean }>;
}

export const defaultPort = 8000;
export const defaultHost = '127.0.0.1';
export const defaultDrainTimeoutMs = 60_000;

function withTimeout(promise: Promise<unknown>, milliseconds: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), Math.max(0, milliseconds));
    promise.then(
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      () => {
        clearTimeout(timer);
        resolve(false);
      },
    );
  });
}

export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const state = options.state ?? new ServerState();
  const app = createServerApp({ ...options, state });
  const host = options.host ?? defaultHost;
  const listener = getRequestListener(app.fetch);
  const refuse = createFastRefusal({ service: options.service, state, token: options.token, logger: options.logger });
  const server = createServer((incoming, outgoing) => {
    if (!refuse(incoming, outgoing)) void listener(incoming, outgoing);
  });
  await new Promise<void>((resolve, reject) => {
    const port = options.port ?? defaultPort;
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(new RubricateError('CONFIG_INVALID', `cannot listen on ${host}:${port}: ${error.code ?? error.message}`, { field: 'port' }, { cause: error }));
    });
    server.listen(port, host, () => resolve());
  });
  // Longer than the usual 60 s idle timeout of load balancers, so they close first (no reset races).
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<{ drained: boolean }> | undefined;

  async function close(closeOptions: { drainTimeoutMs?: number } = {}): Promise<{ drained: boolean }> {
    const timeoutMs = closeOptions.drainTimeoutMs ?? options.drainTimeoutMs ?? defaultDrainTimeoutMs;
    const deadline = Date.now() + timeoutMs;
    state.draining = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const requestsDone = await withTimeout(state.idle(), deadline - Date.now());
    const workDone = await options.service.idle(Math.max(0, deadline - Date.now()));
    server.closeAllConnections();
    await closed;
    return { drained: requestsDone && workDone };
  }

  return {
    app,
    server,
    state,
    host: address.address,
    port: address.port,
    url: `http://${urlHost}:${address.port}`,
    close(closeOptions) {
      closing ??= close(closeOptions);
      return closing;
    },
  };
}
