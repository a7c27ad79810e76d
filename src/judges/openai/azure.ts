/**
 * Azure OpenAI endpoints. Two forms:
 *   classic  https://RES.openai.azure.com/openai/deployments/DEPLOYMENT/chat/completions?api-version=V
 *   v1       https://RES.openai.azure.com/openai/v1/chat/completions   (deployment name in `model`)
 * Both take the key in an `api-key` header. `--judge-base-url` may be the bare resource URL
 * (classic form is built from the deployment), a deployments URL, or the `/openai/v1` URL.
 */
import { RubricateError } from '../../errors.js';

/** The GA api-version used when none is given (classic form only). */
export const defaultAzureApiVersion = '2024-10-21';

export interface AzureEndpoint {
  form: 'classic' | 'v1';
  baseUrl: string;
  query: Record<string, string>;
}

export function azureEndpoint(resourceUrl: string, deployment: string, apiVersion?: string): AzureEndpoint {
  let url: URL;
  try {
    url = new URL(resourceUrl);
  } catch {
    throw new RubricateError('CONFIG_INVALID', `--judge-base-url for azure: is not a URL: "${resourceUrl}"`, { field: 'judge-base-url' });
  }
  const path = url.pathname.replace(/\/+$/, '');
  const versionInUrl = url.searchParams.get('api-version') ?? undefined;
  if (/\/openai\/v1$/.test(path)) {
    const version = apiVersion ?? versionInUrl;
    return { form: 'v1', baseUrl: `${url.origin}${path}`, query: version ? { 'api-version': version } : {} };
  }
  const named = /^(.*\/openai\/deployments\/[^/]+)(?:\/chat\/completions)?$/.exec(path);
  const base = named ? named[1] : `${path.replace(/\/openai$/, '')}/openai/deployments/${encodeURIComponent(deployment)}`;
  return { form: 'classic', baseUrl: `${url.origin}${base}`, query: { 'api-version': apiVersion ?? versionInUrl ?? defaultAzureApiVersion } };
}
