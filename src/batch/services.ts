/** The Batch API of each provider a judge spec names, built from the same flags as the judge. */
import { RubricateError } from '../errors.js';
import { defaultAnthropicBaseUrl } from '../judges/anthropic/anthropic-judge.js';
import { azureEndpoint } from '../judges/openai/azure.js';
import { defaultOpenAIBaseUrl } from '../judges/registry.js';
import { anthropicBatchService, AnthropicBatchApi } from './anthropic-batch-api.js';
import type { BatchService } from './batch-service.js';
import { OpenAIBatchApi, openAIBatchService } from './openai-batch-api.js';

/** The judge flags that say where a provider's API is and how to authenticate. */
interface BatchApiFlags {
  judgeBaseUrl?: string;
  judgeApiKey?: string;
  judgeHeader?: Record<string, string>;
  azureApiVersion?: string;
}

/** The Batch API of a judge spec's provider, with the same base URL, key and headers as the judge. */
export function batchServiceFor(provider: string, flags: BatchApiFlags, environment: NodeJS.ProcessEnv = process.env): BatchService {
  if (provider === 'openai') {
    return openAIBatchService(
      new OpenAIBatchApi({ baseUrl: flags.judgeBaseUrl ?? environment.OPENAI_BASE_URL ?? defaultOpenAIBaseUrl, apiKey: flags.judgeApiKey ?? environment.OPENAI_API_KEY, headers: flags.judgeHeader }),
    );
  }
  if (provider === 'azure') {
    const resource = flags.judgeBaseUrl ?? environment.AZURE_OPENAI_ENDPOINT;
    if (!resource) throw new RubricateError('CONFIG_INVALID', 'azure: needs the resource URL: --judge-base-url https://RESOURCE.openai.azure.com (or AZURE_OPENAI_ENDPOINT)', { field: 'judge-base-url' });
    // Batch files and batches live under the resource's /openai (or /openai/v1), not under a deployment.
    const judgeEndpoint = azureEndpoint(resource, 'batch', flags.azureApiVersion ?? environment.AZURE_OPENAI_API_VERSION ?? environment.OPENAI_API_VERSION);
    const baseUrl = judgeEndpoint.form === 'v1' ? judgeEndpoint.baseUrl : judgeEndpoint.baseUrl.replace(/\/deployments\/[^/]+$/, '');
    return openAIBatchService(
      new OpenAIBatchApi({
        baseUrl,
        apiKey: flags.judgeApiKey ?? environment.AZURE_OPENAI_API_KEY,
        apiKeyHeader: 'api-key',
        query: judgeEndpoint.query,
        headers: flags.judgeHeader,
        batchEndpoint: '/chat/completions',
      }),
      { provider: 'azure' },
    );
  }
  if (provider === 'anthropic') {
    return anthropicBatchService(
      new AnthropicBatchApi({ baseUrl: flags.judgeBaseUrl ?? environment.ANTHROPIC_BASE_URL ?? defaultAnthropicBaseUrl, apiKey: flags.judgeApiKey ?? environment.ANTHROPIC_API_KEY, headers: flags.judgeHeader }),
    );
  }
  throw new RubricateError('CONFIG_INVALID', `--batch works with openai:, azure: and anthropic: judges, not ${provider}:`, { field: 'batch' });
}

