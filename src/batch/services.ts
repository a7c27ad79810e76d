/** The Batch API of each provider a model spec names, built from the same spec and key as the judge. */
import { RubricateError } from '../errors.js';
import { defaultAnthropicBaseUrl } from '../judges/anthropic/anthropic-judge.js';
import { azureEndpoint } from '../judges/openai/azure.js';
import { apiKeyFor, defaultOpenAIBaseUrl } from '../judges/registry.js';
import type { Credentials, ModelSpec } from '../spec/run-spec.js';
import { anthropicBatchService, AnthropicBatchApi } from './anthropic-batch-api.js';
import type { BatchService } from './batch-service.js';
import { OpenAIBatchApi, openAIBatchService } from './openai-batch-api.js';

/**
 * The Batch API of a model spec's provider, with the same base URL, key and headers as the
 * model's synchronous calls; the key comes through `apiKeyFor`, as the judge's does.
 */
export function batchServiceFor(provider: string, model: ModelSpec, credentials: Credentials, environment: NodeJS.ProcessEnv = process.env): BatchService {
  const baseUrl = model.endpoint?.baseUrl;
  const headers = model.endpoint?.headers;
  const apiKey = apiKeyFor(model, credentials, environment);
  if (provider === 'openai') {
    return openAIBatchService(new OpenAIBatchApi({ baseUrl: baseUrl ?? environment.OPENAI_BASE_URL ?? defaultOpenAIBaseUrl, apiKey, headers }));
  }
  if (provider === 'azure') {
    const resource = baseUrl ?? environment.AZURE_OPENAI_ENDPOINT;
    if (!resource) throw new RubricateError('CONFIG_INVALID', 'azure: needs the resource URL: --judge-base-url https://RESOURCE.openai.azure.com (or AZURE_OPENAI_ENDPOINT)', { field: 'judge-base-url' });
    // Batch files and batches live under the resource's /openai (or /openai/v1), not under a deployment.
    const judgeEndpoint = azureEndpoint(resource, 'batch', model.openai?.azureApiVersion ?? environment.AZURE_OPENAI_API_VERSION ?? environment.OPENAI_API_VERSION);
    const batchBase = judgeEndpoint.form === 'v1' ? judgeEndpoint.baseUrl : judgeEndpoint.baseUrl.replace(/\/deployments\/[^/]+$/, '');
    return openAIBatchService(
      new OpenAIBatchApi({ baseUrl: batchBase, apiKey, apiKeyHeader: 'api-key', query: judgeEndpoint.query, headers, batchEndpoint: '/chat/completions' }),
      { provider: 'azure' },
    );
  }
  if (provider === 'anthropic') {
    return anthropicBatchService(new AnthropicBatchApi({ baseUrl: baseUrl ?? environment.ANTHROPIC_BASE_URL ?? defaultAnthropicBaseUrl, apiKey, headers }));
  }
  throw new RubricateError('CONFIG_INVALID', `--batch works with openai:, azure: and anthropic: judges, not ${provider}:`, { field: 'batch' });
}
