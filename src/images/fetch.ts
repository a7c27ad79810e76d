/**
 * Fetching an http(s) image URL an item names. The URL is untrusted, so every hop (the URL
 * and each redirect, followed here by hand) must reach a public address: the host's
 * addresses are checked after DNS resolution, in the lookup the connection itself uses, so
 * the address checked is the address connected to (no DNS rebinding between the two), and
 * TLS still verifies the host's name. Only `Accept` is sent, plus Basic authorization from
 * credentials written in the URL, to that URL's own origin.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { RubricateError } from '../errors.js';
import { redactText } from '../util/redact.js';
import { literalAddress, refusedAddressKind } from './addresses.js';
import { imageError, maxImageBytes, type ImageLocation } from './images.js';

export interface FetchImageOptions {
  /** Largest body accepted (bytes); default `maxImageBytes`. */
  maxBytes?: number;
  /** Whole fetch, redirects included (ms); default 30 s. */
  timeoutMs?: number;
  /** Redirects followed (each to http or https only); default 3. */
  maxRedirects?: number;
  /** Why an address may not be reached (undefined: it may); default `refusedAddressKind`. */
  refusedAddress?: (address: string) => string | undefined;
  /** Lets URLs reach loopback, private, link-local… addresses (`--allow-private-image-urls`, a local test server). */
  allowPrivateAddresses?: boolean;
  /** Ctrl-C: the fetch stops at once. */
  signal?: AbortSignal;
}

/** A hop refused for its address: its message is the reason, shown as is. */
class RefusedAddress extends Error {}

/** A DNS lookup that fails when the host has any address the rule refuses, for the connection to use. */
function checkedLookup(refused: (address: string) => string | undefined): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, family: options.family, hints: options.hints }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      for (const { address } of addresses) {
        const kind = refused(address);
        if (kind) return callback(new RefusedAddress(`${hostname} resolves to ${address}, a ${kind} address`), '', 0);
      }
      if (options.all) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

function get(url: URL, headers: Record<string, string>, signal: AbortSignal, lookup: LookupFunction | undefined): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    // No agent: no pooled socket, no proxy, nothing from another request.
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method: 'GET', headers, signal, agent: false, ...(lookup ? { lookup } : {}) }, resolve);
    request.on('error', reject);
    request.end();
  });
}

/**
 * Fetches a remote image: each hop's address checked (unless `allowPrivateAddresses`),
 * redirects followed by hand (at most `maxRedirects`, http(s) only), an overall timeout, an
 * image content type required, and the body read with a byte limit (a large or endless body
 * is cut off, not buffered). Errors name the item's field and never show the URL's credentials.
 */
export async function fetchImageBytes(url: string, location: ImageLocation, options: FetchImageOptions = {}): Promise<Buffer> {
  const limit = options.maxBytes ?? maxImageBytes;
  const maxRedirects = options.maxRedirects ?? 3;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  const refused = options.allowPrivateAddresses ? undefined : (options.refusedAddress ?? refusedAddressKind);
  const lookup = refused ? checkedLookup(refused) : undefined;
  const shown = (text: string) => redactText(text);
  const stopped = () => (options.signal?.aborted ? 'interrupted' : `no answer within ${timeoutMs} ms`);
  const parsed = new URL(url);
  // Credentials in the URL go in a Basic authorization header, to the URL's own origin only.
  const authorization = parsed.username || parsed.password ? `Basic ${Buffer.from(`${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`).toString('base64')}` : undefined;
  const origin = parsed.origin;
  parsed.username = '';
  parsed.password = '';
  let current = parsed;
  for (let redirects = 0; ; redirects += 1) {
    // A host written as an address is not looked up: it is checked here (the URL parser has already read every spelling of it).
    const literal = literalAddress(current.hostname);
    const literalKind = refused && literal !== undefined ? refused(literal) : undefined;
    if (literalKind) throw imageError(`image URL ${shown(current.href)} names ${literal}, a ${literalKind} address: refused (--allow-private-image-urls allows it)`, location);
    let response: IncomingMessage;
    try {
      const headers: Record<string, string> = { accept: 'image/*' };
      if (authorization && current.origin === origin) headers.authorization = authorization;
      response = await get(current, headers, signal, lookup);
    } catch (error) {
      if (error instanceof RefusedAddress) throw imageError(`image URL ${shown(current.href)} refused: ${error.message} (--allow-private-image-urls allows it)`, location);
      const reason = signal.aborted ? stopped() : (error as Error).message;
      throw imageError(`image URL ${shown(current.href)} could not be fetched: ${shown(reason)}`, location);
    }
    const redirectTo = response.headers.location;
    if (response.statusCode !== undefined && response.statusCode >= 300 && response.statusCode < 400 && redirectTo) {
      response.destroy();
      if (redirects >= maxRedirects) throw imageError(`image URL ${shown(url)} redirects more than ${maxRedirects} times`, location);
      const next = new URL(redirectTo, current);
      if (next.protocol !== 'http:' && next.protocol !== 'https:') throw imageError(`image URL ${shown(url)} redirects to a ${next.protocol} URL (only http and https are followed)`, location);
      current = next;
      continue;
    }
    const status = response.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      response.destroy();
      throw imageError(`image URL ${shown(current.href)} answered HTTP ${status}`, location);
    }
    const type = (response.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (!type.startsWith('image/')) {
      response.destroy();
      throw imageError(`image URL ${shown(current.href)} answered ${type === '' ? 'without a content type' : `with content type ${type}`}, not an image`, location);
    }
    const declared = Number(response.headers['content-length'] ?? '0');
    if (declared > limit) {
      response.destroy();
      throw imageError(`image at ${shown(current.href)} is ${declared} bytes, over the ${limit}-byte limit`, location);
    }
    const chunks: Buffer[] = [];
    let total = 0;
    try {
      for await (const chunk of response as AsyncIterable<Buffer>) {
        total += chunk.byteLength;
        if (total > limit) {
          response.destroy();
          throw imageError(`image at ${shown(current.href)} is over the ${limit}-byte limit`, location);
        }
        chunks.push(chunk);
      }
    } catch (error) {
      if (RubricateError.isInstance(error)) throw error;
      throw imageError(`image at ${shown(current.href)} could not be read: ${signal.aborted ? stopped() : shown((error as Error).message)}`, location);
    }
    return Buffer.concat(chunks);
  }
}
