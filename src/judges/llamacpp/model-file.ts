/**
 * Finding the GGUF file a local judge runs: a path as given, or a model URI
 * (`hf:USER/REPO:QUANT`, or an http(s) URL) resolved into a cache folder, downloading it
 * once when allowed. Offline with nothing cached fails within a few seconds with a message
 * that names the alternatives, never a hang.
 */
import { existsSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RubricateError } from '../../errors.js';
import { loadNodeLlamaCpp } from './runtime.js';

import { defaultLocalModelUri } from './default-model.js';

export { defaultLocalModelUri };

/** How long resolving a model URI (before any byte is downloaded) may take before we call it offline. */
export const defaultLookupTimeoutMs = 5000;

export const localModelAlternatives =
  'point to a local GGUF file with `--judge gguf:/path/model.gguf` or RUBRICATE_MODEL=/path/model.gguf, ' +
  'or grade through an endpoint with `--judge openai:MODEL` and OPENAI_BASE_URL/OPENAI_API_KEY, ' +
  'or try the pipeline offline on made-up verdicts with `--judge scripted` (or `rubricate fake-judge` as an endpoint)';

export type DownloadProgress = (done: number, total: number) => void;

export interface ResolveModelReferenceOptions {
  /** Where URIs are looked up and downloaded to; default {@link defaultModelCacheDirectory}. */
  cacheDirectory?: string;
  download: boolean;
  onProgress?: DownloadProgress;
  lookupTimeoutMs?: number;
}

export interface ResolveDefaultLocalModelOptions {
  environment?: NodeJS.ProcessEnv;
  cacheDirectory: string;
  download: boolean;
  onProgress?: DownloadProgress;
  lookupTimeoutMs?: number;
}

/** `$RUBRICATE_CACHE_DIR/models`, else `$XDG_CACHE_HOME/rubricate/models`, else `~/.cache/rubricate/models`. */
export function defaultModelCacheDirectory(environment: NodeJS.ProcessEnv = process.env): string {
  if (environment.RUBRICATE_CACHE_DIR) return path.resolve(environment.RUBRICATE_CACHE_DIR, 'models');
  const cacheRoot = environment.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.resolve(cacheRoot, 'rubricate', 'models');
}

export function isModelUri(reference: string): boolean {
  return /^hf:/i.test(reference) || /^https?:\/\//i.test(reference);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Resolves `promise`, or rejects after `timeoutMs`; `onLate` receives the value if it arrives after all. */
function withTimeout<T>(promise: Promise<T>, timeoutMs: number, onLate: (value: T) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    promise.then(
      (value) => {
        clearTimeout(timer);
        if (timedOut) onLate(value);
        else resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (!timedOut) reject(error);
      },
    );
  });
}

/**
 * Returns the absolute path of a local GGUF file for `reference` (a path or a model URI).
 * Throws JUDGE_UNAVAILABLE when the file is missing, or the URI is not cached and cannot
 * (or may not) be downloaded.
 */
export async function resolveModelReference(reference: string, options: ResolveModelReferenceOptions): Promise<string> {
  if (!isModelUri(reference)) {
    const filePath = path.resolve(reference);
    if (!existsSync(filePath) || !statSync(filePath).isFile()) {
      throw new RubricateError('JUDGE_UNAVAILABLE', `no GGUF model file at ${filePath}`, { file: filePath });
    }
    return filePath;
  }
  const cacheDirectory = path.resolve(options.cacheDirectory ?? defaultModelCacheDirectory());
  const nodeLlamaCpp = await loadNodeLlamaCpp();
  try {
    return await nodeLlamaCpp.resolveModelFile(reference, { directory: cacheDirectory, download: false, cli: false });
  } catch {
    // Not cached: fall through to the download decision.
  }
  if (!options.download) {
    throw new RubricateError('JUDGE_UNAVAILABLE', `model ${reference} is not in ${cacheDirectory} and downloading is off; ${localModelAlternatives}`, {
      model: reference,
      cacheDirectory,
    });
  }
  const timeoutMs = options.lookupTimeoutMs ?? defaultLookupTimeoutMs;
  let downloader: Awaited<ReturnType<NodeLlamaCpp['createModelDownloader']>>;
  try {
    // Resolving the URI is the only network step before bytes flow; bound it so offline is quick.
    downloader = await withTimeout(
      nodeLlamaCpp.createModelDownloader({
        modelUri: reference,
        dirPath: cacheDirectory,
        showCliProgress: false,
        skipExisting: true,
        deleteTempFileOnCancel: false,
        onProgress: options.onProgress ? (status) => options.onProgress?.(status.downloadedSize, status.totalSize) : undefined,
      }),
      timeoutMs,
      (late) => void late.cancel({ deleteTempFile: false }).catch(() => undefined),
    );
  } catch (error) {
    throw new RubricateError(
      'JUDGE_UNAVAILABLE',
      `model ${reference} is not in ${cacheDirectory} and could not be downloaded (offline? ${describe(error)}); ${localModelAlternatives}`,
      { model: reference, cacheDirectory },
      { cause: error },
    );
  }
  try {
    return await downloader.download();
  } catch (error) {
    throw new RubricateError('JUDGE_UNAVAILABLE', `downloading ${reference} into ${cacheDirectory} failed: ${describe(error)}; ${localModelAlternatives}`, {
      model: reference,
      cacheDirectory,
    }, { cause: error });
  }
}

type NodeLlamaCpp = Awaited<ReturnType<typeof loadNodeLlamaCpp>>;

/**
 * The model the local judge uses when the user named none: `RUBRICATE_MODEL` when set,
 * else {@link defaultLocalModelUri} from (or downloaded into) `cacheDirectory`.
 */
export async function resolveDefaultLocalModel(options: ResolveDefaultLocalModelOptions): Promise<string> {
  const environment = options.environment ?? process.env;
  const configured = environment.RUBRICATE_MODEL?.trim();
  if (configured) {
    try {
      return await resolveModelReference(configured, options);
    } catch (error) {
      if (RubricateError.isInstance(error) && error.code === 'JUDGE_UNAVAILABLE') {
        throw new RubricateError('JUDGE_UNAVAILABLE', `RUBRICATE_MODEL: ${error.message}`, { ...error.details, field: 'RUBRICATE_MODEL' }, { cause: error });
      }
      throw error;
    }
  }
  return resolveModelReference(defaultLocalModelUri, options);
}
