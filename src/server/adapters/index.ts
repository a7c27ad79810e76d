/** Trainer protocols served next to the native API, one file each, registered by name. */
import { carrAdapter } from './carr.js';
import { nemoGymAdapter } from './nemo-gym.js';
import { openRlhfAdapter } from './openrlhf.js';
import { slimeAdapter } from './slime.js';
import type { ServerAdapter } from './types.js';
import { vertexAdapter } from './vertex.js';

export const serverAdapters: ReadonlyMap<string, ServerAdapter> = new Map([openRlhfAdapter, slimeAdapter, vertexAdapter, nemoGymAdapter, carrAdapter].map((adapter) => [adapter.name, adapter]));

/** Routes whose requests wait for room (see `ServerAdapter.waitsForRoom`). */
export const waitingRoutes: ReadonlySet<string> = new Set([...serverAdapters.values()].filter((adapter) => adapter.waitsForRoom).flatMap((adapter) => adapter.routes));
export type { ServerAdapter } from './types.js';
export { carrAdapter, nemoGymAdapter, openRlhfAdapter, slimeAdapter, vertexAdapter };
