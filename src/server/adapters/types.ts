/** A trainer-specific HTTP protocol, mapped onto the reward service. */
import type { RouteContext, ServerApp } from '../context.js';

export interface ServerAdapter {
  name: string;
  description: string;
  /** Paths the adapter serves (for docs, metrics labels and the startup line). */
  routes: readonly string[];
  /**
   * Requests wait for room in a full admission queue (up to the adapter's deadline) instead of
   * being refused at once; they are refused (503 + Retry-After) only when the waiting line is full.
   */
  waitsForRoom: boolean;
  register(app: ServerApp, context: RouteContext): void;
}
