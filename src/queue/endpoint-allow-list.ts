/**
 * Which judge endpoints a worker calls with its API key. A chunk's run spec comes from whoever
 * can write to the queue, the key is the worker's own: a worker grades a chunk only when every
 * judge the spec builds sits under an endpoint its operator allowed (`--allow-endpoint`; by
 * default the endpoint the worker resolves by itself for that judge: its OPENAI_BASE_URL,
 * ANTHROPIC_BASE_URL or AZURE_OPENAI_ENDPOINT, else the provider's official URL).
 *
 * URLs are compared parsed, never as text: scheme, host (as the URL parser spells it, without a
 * trailing dot), port, then the path by whole segments. User info, query and fragment play no
 * part, so `https://api.openai.com@evil.example/` is evil.example and `https://api.openai.com.evil.example/`
 * is another host.
 */
import { RubricateError } from '../errors.js';
import { createJudge } from '../judges/registry.js';
import type { Judge } from '../judges/types.js';
import { redactUrl } from '../util/redact.js';

interface Endpoint {
  origin: string;
  segments: string[];
}

function parseEndpoint(url: string): Endpoint | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
  const host = parsed.hostname.endsWith('.') ? parsed.hostname.slice(0, -1) : parsed.hostname;
  return { origin: `${parsed.protocol}//${host}${parsed.port ? `:${parsed.port}` : ''}`, segments: parsed.pathname.split('/').filter((segment) => segment !== '') };
}

/** Whether `endpoint` is one of `allowed`, or below one of them by whole path segments. */
export function endpointAllowed(endpoint: string, allowed: readonly string[]): boolean {
  const target = parseEndpoint(endpoint);
  if (!target) return false;
  return allowed.some((entry) => {
    const base = parseEndpoint(entry);
    return base !== undefined && base.origin === target.origin && base.segments.every((segment, index) => target.segments[index] === segment);
  });
}

/**
 * The endpoints the worker's own settings give these judges (the same specs, with no base URL
 * from the run): the default allow-list. Building a judge sends nothing; a spec the worker
 * cannot build by itself (no endpoint configured for it) allows nothing.
 */
export async function ownEndpoints(judges: readonly Judge[], settings: { apiKey?: string; environment?: NodeJS.ProcessEnv }): Promise<string[]> {
  const endpoints: string[] = [];
  for (const judge of judges) {
    // Judges without an endpoint (a local model) send no key anywhere, and are not rebuilt.
    if (judge.provenance.baseUrl === undefined) continue;
    const own = await createJudge({ model: judge.provenance.id }, { apiKey: settings.apiKey, environment: settings.environment }).catch(() => undefined);
    if (own?.provenance.baseUrl !== undefined) endpoints.push(own.provenance.baseUrl);
    await own?.close?.();
  }
  return endpoints;
}

/** The refusal for the first judge whose endpoint is not allowed (nothing is sent to it), or undefined. */
export function endpointRefusal(judges: readonly Judge[], allowed: readonly string[]): RubricateError | undefined {
  for (const judge of judges) {
    const endpoint = judge.provenance.baseUrl;
    if (endpoint === undefined || endpointAllowed(endpoint, allowed)) continue;
    const shown = redactUrl(endpoint);
    return new RubricateError(
      'JUDGE_ENDPOINT_NOT_ALLOWED',
      `the worker refused this run's judge ${judge.provenance.id} at ${shown}: a worker sends its API key only to the endpoints its operator allowed (worker --allow-endpoint; by default the endpoint it is configured for). Nothing was sent; to allow it, start the worker with --allow-endpoint ${shown}`,
      { endpoint: shown, field: 'judge-base-url' },
    );
  }
  return undefined;
}
