/** Why a server could not listen, said so a person can act on it: the port, what holds it, the flag to change. */
import { RubricateError } from '../errors.js';

/**
 * The error of a failed `listen(port, host)`: a port in use names the port and the ways out
 * (stop what holds it, another `--port`, `--port 0` for a free one), never a bare EADDRINUSE.
 */
export function listenError(host: string, port: number, error: NodeJS.ErrnoException, what = 'the server'): RubricateError {
  const reason =
    error.code === 'EADDRINUSE'
      ? `port ${port} is already in use on ${host} (another rubricate, or another program: \`ss -ltnp 'sport = :${port}'\` shows which). Stop it, or start ${what} on another port: --port ${port + 1}, or --port 0 for any free one`
      : error.code === 'EACCES'
        ? `no permission to listen on port ${port} of ${host} (ports below 1024 need privileges): give --port 1024 or above`
        : error.code === 'EADDRNOTAVAIL'
          ? `${host} is not an address of this machine: check --host`
          : `${error.code ?? 'error'}: ${error.message}`;
  return new RubricateError('CONFIG_INVALID', `cannot listen on ${host}:${port}: ${reason}`, { field: 'port', ...(error.code ? { reason: error.code } : {}) }, { cause: error });
}
