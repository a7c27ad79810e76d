/** `--port` of the commands that listen (`view`, `serve`): 0 (any free port) to 65535. */
import { RubricateError } from '../errors.js';

export function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new RubricateError('CONFIG_INVALID', `--port must be an integer from 0 to 65535, got "${value}"`, { field: 'port' });
  return port;
}
