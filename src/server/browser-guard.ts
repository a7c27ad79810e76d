/**
 * The server's browser attack surface. Any web page the user visits can make the browser send
 * requests to a server on the user's machine: "simple" cross-site POSTs (text/plain, form
 * encodings, or a body with no type at all) go out without a CORS preflight, and a DNS-rebound
 * name can even read the answers. Without a token that would let any page spend judge calls or
 * change evolving rubrics. Two rules close it:
 *   - requests with a body must say `Content-Type: application/json` (415 otherwise), which a
 *     cross-site page cannot send without a preflight we never approve;
 *   - the Host header (and Origin, when a browser sends one) must name the address the server is
 *     bound to (for a loopback bind: a loopback name by `util/loopback-host.ts`, the rule every
 *     loopback service shares), or an `--allow-origin` entry (403 otherwise). Clients that are
 *     not browsers send no Origin and are unaffected.
 */
import type { MiddlewareHandler } from 'hono';
import { RubricateError } from '../errors.js';
import { requestHeader } from './body.js';
import type { ServerEnv } from './context.js';
import { errorResponse } from './http-error.js';
import { isLoopbackHostHeader, isLoopbackHostname } from '../util/loopback-host.js';

const wildcardAddresses = new Set(['0.0.0.0', '::', '']);

/** Whether a bind address (`127.0.0.1`, `::1`, `[::1]`, `localhost`) is loopback. */
export function isLoopbackHost(host: string): boolean {
  return isLoopbackHostname(stripBrackets(host));
}

function stripBrackets(host: string): string {
  return host.replace(/^\[|\]$/g, '');
}

/** The hostname of a Host header value (`name:port`, `[v6]:port`), lower-cased. */
export function hostnameOf(hostHeader: string): string {
  const value = hostHeader.trim().toLowerCase();
  if (value.startsWith('[')) return value.slice(1, value.indexOf(']') === -1 ? undefined : value.indexOf(']'));
  const colon = value.indexOf(':');
  return colon === -1 ? value : value.slice(0, colon);
}

export interface BrowserGuardOptions {
  /** The address the server is bound to (default loopback). */
  bindHost?: string;
  /**
   * Extra origins (`https://trainer.example:8443`) or host names (`rewards.internal`) to accept
   * in Host and Origin headers, e.g. for a server reached through a proxy or a DNS name.
   */
  allowOrigins?: readonly string[];
}

interface AllowList {
  /** Bound to loopback: any loopback name is this server. */
  loopback: boolean;
  hostnames: Set<string>;
  origins: Set<string>;
  /** Bound to every interface: any Host may be right, only Origin is checked. */
  anyHost: boolean;
}

function allowList(options: BrowserGuardOptions): AllowList {
  const bindHost = stripBrackets(options.bindHost ?? '127.0.0.1').toLowerCase();
  const hostnames = new Set<string>();
  const origins = new Set<string>();
  const anyHost = wildcardAddresses.has(bindHost);
  const loopback = isLoopbackHost(bindHost);
  if (!loopback && !anyHost) hostnames.add(bindHost);
  for (const entry of options.allowOrigins ?? []) {
    const trimmed = entry.trim().toLowerCase().replace(/\/+$/, '');
    if (trimmed === '') continue;
    if (trimmed.includes('://')) {
      try {
        const url = new URL(trimmed);
        origins.add(url.origin);
        hostnames.add(stripBrackets(url.hostname));
      } catch {
        throw new RubricateError('CONFIG_INVALID', `--allow-origin "${entry}" is not an origin (scheme://host[:port]) or a host name`, { field: 'allow-origin' });
      }
    } else {
      hostnames.add(hostnameOf(trimmed));
    }
  }
  return { loopback, hostnames, origins, anyHost };
}

export function browserGuard(options: BrowserGuardOptions = {}): MiddlewareHandler<ServerEnv> {
  const allowed = allowList(options);
  const hint = 'start the server with --allow-origin to accept it';
  return async (context, next) => {
    const hostHeader = requestHeader(context, 'host') ?? new URL(context.req.url).host;
    const hostname = hostnameOf(hostHeader);
    if (!allowed.anyHost && !(allowed.loopback && isLoopbackHostHeader(hostHeader.trim())) && !allowed.hostnames.has(hostname)) {
      return errorResponse(context, new RubricateError('FORBIDDEN_ORIGIN', `Host "${hostHeader}" is not an address of this server; ${hint}`, { field: 'host' }));
    }
    const origin = requestHeader(context, 'origin');
    if (origin !== undefined && !originAllowed(origin, hostHeader, allowed)) {
      return errorResponse(context, new RubricateError('FORBIDDEN_ORIGIN', `requests from the web origin "${origin}" are not accepted; ${hint}`, { field: 'origin' }));
    }
    await next();
  };
}

function originAllowed(origin: string, hostHeader: string, allowed: AllowList): boolean {
  const normalized = origin.trim().toLowerCase();
  // `Origin: null` comes from sandboxed frames and local files: never one of ours.
  if (normalized === 'null') return false;
  let url: URL;
  try {
    url = new URL(normalized);
  } catch {
    return false;
  }
  if (allowed.origins.has(url.origin)) return true;
  const hostname = stripBrackets(url.hostname);
  if (allowed.anyHost) return url.host === hostHeader.trim().toLowerCase();
  return (allowed.loopback && isLoopbackHostHeader(url.host)) || allowed.hostnames.has(hostname);
}
