/**
 * Binds the app to a port (@hono/node-server's request listener, behind the fast refusal path
 * of fast-refusal.ts) and shuts it down gracefully: stop accepting,
 * refuse new requests on open connections (503, Connection: close), let in-flight requests
 * finish, let grading abandoned at a deadline finish too (its verdicts go to the cache), then
 * close every connection.
 */
import { listenError } from '../util/listen-error.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { createServerApp, type ServerAppOptions } from './app.js';
import { createFastRefusal } from './fast-refusal.js';
import { isLoopbackHost } from './browser-guard.js';
import type { ServerApp } from './context.js';
import { ServerState } from './state.js';

export interface StartServerOptions extends ServerAppOptions {
  /** 0 picks a free port. Default 8000. */
  port?: number;
  /** Default 127.0.0.1 (loopback); 0.0.0.0 to serve other machines. */
  host?: string;
  /** Longest a graceful close waits for in-flight work. Default 60 s. */
  drainTimeoutMs?: number;
  /** Where start-up warnings go (an open server beyond loopback); default stderr. */
  onWarning?: (message: string) => void;
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

/**
 * The port `serve` listens on by default.
 *
 * @example
 * ```ts
 * import { defaultHost, defaultPort } from 'rubricate/server';
 * console.log(`http://${defaultHost}:${defaultPort}/v1/score`);
 * ```
 */
export const defaultPort = 8000;
/**
 * The address `serve` binds by default (loopback).
 *
 * @example
 * ```ts
 * import { defaultHost, defaultPort } from 'rubricate/server';
 * console.log(`http://${defaultHost}:${defaultPort}/v1/score`);
 * ```
 */
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

/** The warning of a server bound beyond loopback with no token. */
export function openServerWarning(host: string, port: number): string {
  const rule = '!'.repeat(72);
  return [
    rule,
    `WARNING: rubricate serve is listening on ${host}:${port} WITHOUT a token.`,
    'Anyone who can reach this address can spend your judge calls and change evolving rubrics.',
    'Set --token (or RUBRICATE_TOKEN), or bind to 127.0.0.1.',
    rule,
  ].join('\n');
}

/**
 * Starts the reward service on a port; `close` drains the work in flight.
 *
 * @example
 * ```ts
 * import { createJudge } from 'rubricate';
 * import { RewardService, startServer } from 'rubricate/server';
 * const service = new RewardService({ grading: { judge: await createJudge({ model: 'openai:gpt-4.1-mini' }) } });
 * const running = await startServer({ service, port: 0 });
 * console.log(`serving on ${running.url}`);
 * await running.close();
 * ```
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const state = options.state ?? new ServerState();
  const host = options.host ?? defaultHost;
  const app = createServerApp({ ...options, state, bindHost: options.bindHost ?? host });
  const listener = getRequestListener(app.fetch);
  const refuse = createFastRefusal({ service: options.service, state, token: options.token, logger: options.logger });
  const server = createServer((incoming, outgoing) => {
    if (!refuse(incoming, outgoing)) void listener(incoming, outgoing);
  });
  await new Promise<void>((resolve, reject) => {
    const port = options.port ?? defaultPort;
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(listenError(host, port, error, 'the reward server'));
    });
    server.listen(port, host, () => resolve());
  });
  // Longer than the usual 60 s idle timeout of load balancers, so they close first (no reset races).
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  const address = server.address() as AddressInfo;
  if (!isLoopbackHost(host) && !options.token) {
    const warning = openServerWarning(host, address.port);
    options.logger?.warn({ host, port: address.port }, 'no token: anyone who can reach this address can spend judge calls');
    (options.onWarning ?? ((message: string) => process.stderr.write(`${message}\n`)))(warning);
  }
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
