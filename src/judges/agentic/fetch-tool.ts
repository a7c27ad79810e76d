/**
 * `fetch`: reads a source a response cites, from the hosts the run allows (`--fetch-allow`). The
 * URL comes from the judge, which read it in untrusted text, so every hop (the URL and each
 * redirect, followed by hand) must be on the allow-list, and a host named by a name must
 * resolve to public addresses only, checked in the lookup the connection itself uses (no
 * rebinding between check and connect). A loopback or private address is reached only when the
 * allow-list names it as itself (`127.0.0.1:8080`, `localhost`). Nothing identifying is sent:
 * no key, cookie or URL credentials (a URL with credentials is refused). What is read is
 * bounded by the verdict's byte budget and a time limit per fetch.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { RubricateError } from '../../errors.js';
import { literalAddress, refusedAddressKind } from '../../images/addresses.js';
import { bounded, stringArgument, toolFailed, toolRefused, type AgenticTool, type ToolContext } from './tool.js';

export interface FetchSettings {
  /** Hosts allowed: `example.org`, `*.example.org` (its subdomains), `host:port`. */
  allow: readonly string[];
  /** Time one fetch may take, redirects included. */
  timeoutMs: number;
}

export const defaultFetchTimeoutMs = 10_000;
export const defaultFetchMaxBytes = 262_144;
const maxRedirects = 3;
const textTypes = /^(text\/[\w.+-]+|application\/(json|xml|xhtml\+xml|[\w.-]+\+(json|xml)))$/;

/** An allow-list entry: a host (`*.` for its subdomains; an IPv6 address in brackets) and maybe a port; undefined when it is not one. */
export function parseAllowEntry(entry: string): { host: string; port?: string } | undefined {
  const match = /^(\[[0-9a-f:.]+\]|(?:\*\.)?[a-z0-9.-]+)(?::(\d{1,5}))?$/.exec(entry.trim().toLowerCase());
  if (!match) return undefined;
  return { host: match[1].replace(/^\[|\]$/g, ''), ...(match[2] !== undefined ? { port: match[2] } : {}) };
}

/** Whether a URL's host (and port) is on the allow-list, and whether an entry names it as itself (then a loopback or private address is allowed). */
export function allowedHost(url: URL, allow: readonly string[]): { allowed: boolean; named: boolean } {
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, '');
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  for (const entry of allow) {
    const parsed = parseAllowEntry(entry);
    if (!parsed || (parsed.port !== undefined && parsed.port !== port)) continue;
    const wildcard = parsed.host.startsWith('*.');
    if (wildcard ? host.endsWith(parsed.host.slice(1)) : host === parsed.host) return { allowed: true, named: !wildcard };
  }
  return { allowed: false, named: false };
}

/** A hop refused for its address: its message is the reason. */
class RefusedAddress extends Error {}

function checkedLookup(): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, family: options.family, hints: options.hints }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      for (const { address } of addresses) {
        const kind = refusedAddressKind(address);
        if (kind) return callback(new RefusedAddress(`${hostname} resolves to ${address}, a ${kind} address (name it on --fetch-allow as itself to allow it)`), '', 0);
      }
      if (options.all) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

/** Checks one hop against the allow-list and the address rule; returns the lookup its connection must use. */
function checkHop(url: URL, settings: FetchSettings): LookupFunction | undefined {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw toolRefused('fetch', `${url.protocol} URLs are not fetched (http and https only)`);
  if (url.username || url.password) throw toolRefused('fetch', 'a URL with credentials is refused: no credential is ever sent');
  const { allowed, named } = allowedHost(url, settings.allow);
  if (!allowed) throw toolRefused('fetch', `${url.host} is not on the allow-list (--fetch-allow ${settings.allow.join(', ')})`);
  const literal = literalAddress(url.hostname);
  if (named && (literal !== undefined || url.hostname.toLowerCase() === 'localhost')) return undefined;
  const kind = literal !== undefined ? refusedAddressKind(literal) : undefined;
  if (kind) throw toolRefused('fetch', `${url.host} is a ${kind} address: name it on --fetch-allow as itself to allow it`);
  return checkedLookup();
}

function get(url: URL, signal: AbortSignal, lookup: LookupFunction | undefined): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    // No agent: no pooled socket, no proxy; only these headers, never a key or a cookie.
    const headers = { accept: 'text/html, text/plain, application/json, application/xml;q=0.9, */*;q=0.1', 'user-agent': 'rubricate-agentic-judge' };
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method: 'GET', headers, signal, agent: false, ...(lookup ? { lookup } : {}) }, resolve);
    request.on('error', reject);
    request.end();
  });
}

/** The first answer that is not a redirect, every hop checked. */
async function follow(start: URL, settings: FetchSettings, signal: AbortSignal): Promise<{ response: IncomingMessage; url: URL }> {
  let current = start;
  for (let redirects = 0; ; redirects += 1) {
    const lookup = checkHop(current, settings);
    let response: IncomingMessage;
    try {
      response = await get(current, signal, lookup);
    } catch (error) {
      if (error instanceof RefusedAddress) throw toolRefused('fetch', error.message);
      throw toolFailed('fetch', `${current.href} could not be fetched: ${signal.aborted ? `no answer within ${settings.timeoutMs} ms` : (error as Error).message}`);
    }
    const location = response.headers.location;
    const status = response.statusCode ?? 0;
    if (status < 300 || status >= 400 || !location) return { response, url: current };
    response.destroy();
    if (redirects >= maxRedirects) throw toolFailed('fetch', `${start.href} redirects more than ${maxRedirects} times`);
    current = new URL(location, current);
  }
}

/** The body's first `limit` bytes, and whether there was more. */
async function readBody(response: IncomingMessage, limit: number, signal: AbortSignal, timeoutMs: number): Promise<{ body: Buffer; cut: boolean }> {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      const room = limit - total;
      if (chunk.byteLength > room) {
        chunks.push(chunk.subarray(0, room));
        response.destroy();
        return { body: Buffer.concat(chunks), cut: true };
      }
      chunks.push(chunk);
      total += chunk.byteLength;
    }
  } catch (error) {
    throw toolFailed('fetch', `the body could not be read: ${signal.aborted ? `no answer within ${timeoutMs} ms` : (error as Error).message}`);
  }
  return { body: Buffer.concat(chunks), cut: false };
}

/** Readable text of an HTML page: scripts, styles and tags out, a few entities decoded, blank runs folded. */
export function htmlText(html: string): string {
  return html
    .replace(/<(script|style|noscript)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<(br|p|div|li|h[1-6]|tr)\b[^>]*>/gi, '\n')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/[ \t]+/g, ' ')
    .replace(/\n\s*\n+/g, '\n\n')
    .trim();
}

async function fetchSource(args: Record<string, unknown>, context: ToolContext, settings: FetchSettings) {
  const written = stringArgument('fetch', args, 'url');
  let url: URL;
  try {
    url = new URL(written);
  } catch {
    throw toolFailed('fetch', `"${written.slice(0, 200)}" is not a URL`);
  }
  if (context.fetchBytesLeft <= 0) throw new RubricateError('JUDGE_TOOL_BUDGET', 'tool fetch: the verdict has read its --fetch-max-bytes already', { tool: 'fetch' });
  const signal = AbortSignal.any([AbortSignal.timeout(settings.timeoutMs), context.signal]);
  const { response, url: answered } = await follow(url, settings, signal);
  const status = response.statusCode ?? 0;
  // A page that is not there is a fact about the citation; any other failure is the tool's.
  if (status === 404 || status === 410) {
    response.destroy();
    return { text: `${answered.href} answered HTTP ${status}: the page does not exist there`, summary: `HTTP ${status}`, bytes: 0 };
  }
  if (status < 200 || status >= 300) {
    response.destroy();
    throw toolFailed('fetch', `${answered.href} answered HTTP ${status}`);
  }
  const type = (response.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (!textTypes.test(type)) {
    response.destroy();
    throw toolFailed('fetch', `${answered.href} answered ${type === '' ? 'without a content type' : `with ${type}`}, not text`);
  }
  const { body, cut } = await readBody(response, context.fetchBytesLeft, signal, settings.timeoutMs);
  context.fetchBytesLeft -= body.byteLength;
  const decoded = body.toString('utf8');
  const text = type.includes('html') ? htmlText(decoded) : decoded;
  const note = cut ? `\n[cut at ${body.byteLength} bytes: the verdict's --fetch-max-bytes is spent]` : '';
  return { text: bounded(`${answered.href} (HTTP ${status}, ${type}):\n\n${text}${note}`), summary: `HTTP ${status} ${type}, ${body.byteLength} bytes${cut ? ' (cut)' : ''}`, bytes: body.byteLength };
}

export function createFetchTool(settings: FetchSettings): AgenticTool {
  return {
    name: 'fetch',
    description: `fetch: reads a web page a response cites, from these hosts only: ${settings.allow.join(', ')}. Argument: "url" (http or https). A page that does not exist answers HTTP 404.`,
    arguments: ['url'],
    run: (args, context) => fetchSource(args, context, settings),
  };
}
