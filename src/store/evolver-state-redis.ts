/**
 * Evolving-rubric state on Redis or Valkey, shared by every serve replica pointed at it:
 * per prompt a hash (`version`, `state` as JSON) and a list of history events. A write is
 * one Lua script, so checking the version, replacing the state and appending the events
 * happen at once or not at all.
 */
import { RubricateError } from '../errors.js';
import { safeParseJson } from '../util/json.js';
import type { EvolverStateStore, HistoryEvent, PromptState, VersionedPromptState } from './evolver-state.js';
import { RedisConnection } from './redis-connection.js';

const keyPrefix = 'rubricate:evolver:';

/** KEYS: state hash, history list. ARGV: expected version, state JSON, events JSON… Returns 1 when written. */
const writeScript = `
local version = tonumber(redis.call('hget', KEYS[1], 'version') or '0')
if version ~= tonumber(ARGV[1]) then return 0 end
redis.call('hset', KEYS[1], 'version', version + 1, 'state', ARGV[2])
for index = 3, #ARGV do redis.call('rpush', KEYS[2], ARGV[index]) end
return 1`;

export class RedisEvolverStateStore implements EvolverStateStore {
  readonly connection: RedisConnection;

  constructor(url: string, options: { failFast?: boolean } = {}) {
    this.connection = new RedisConnection(url, { connectionName: 'rubricate-evolver', ...(options.failFast ? { failWhileDisconnected: true } : {}) });
  }

  private keys(promptId: string): [string, string] {
    return [`${keyPrefix}${promptId}:state`, `${keyPrefix}${promptId}:history`];
  }

  async read(promptId: string): Promise<VersionedPromptState | undefined> {
    let fields: Record<string, string>;
    try {
      fields = await this.connection.client.hgetall(this.keys(promptId)[0]);
    } catch (error) {
      throw this.connection.unavailable(`reading the rubric of "${promptId}" failed: ${(error as Error).message}`, error);
    }
    if (fields.version === undefined || fields.state === undefined) return undefined;
    const parsed = safeParseJson(fields.state);
    if (!parsed.ok) throw new RubricateError('INTERNAL', `damaged rubric state for prompt "${promptId}" in ${this.connection.description}`, { promptId });
    return { ...(parsed.value as PromptState), version: Number(fields.version) };
  }

  async write(promptId: string, expectedVersion: number, state: PromptState, events: readonly HistoryEvent[]): Promise<boolean> {
    try {
      const written = await this.connection.client.eval(writeScript, 2, ...this.keys(promptId), expectedVersion, JSON.stringify(state), ...events.map((event) => JSON.stringify(event)));
      return Number(written) === 1;
    } catch (error) {
      throw this.connection.unavailable(`writing the rubric of "${promptId}" failed: ${(error as Error).message}`, error);
    }
  }

  async history(promptId: string): Promise<HistoryEvent[]> {
    let entries: string[];
    try {
      entries = await this.connection.client.lrange(this.keys(promptId)[1], 0, -1);
    } catch (error) {
      throw this.connection.unavailable(`reading the history of "${promptId}" failed: ${(error as Error).message}`, error);
    }
    return entries.flatMap((entry) => {
      const parsed = safeParseJson(entry);
      return parsed.ok ? [parsed.value as HistoryEvent] : [];
    });
  }

  ready(timeoutMs?: number): Promise<void> {
    return this.connection.ready(timeoutMs);
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}
