/** A trainer-specific HTTP protocol, mapped onto the reward service. */
import type { RouteContext, ServerApp } from '../context.js';

export interface ServerAdapter {
  name: string;
  description: string;
  /** Paths the adapter serves (for docs, metrics labels and the startup line). */
  routes: readonly string[];
  register(app: ServerApp, context: RouteContext): void;
}
