/**
 * The chat wrapper that renders a model's messages. node-llama-cpp resolves it by rendering the
 * model's Jinja chat template against each of its specialized wrappers: about 1.5 s of CPU, paid
 * again by every judge of a process (a grading run, a benchmark's plans, each test). The answer
 * depends only on what the file says (architecture, name, BOS, the tokenizer with its template)
 * and the file name, so a process resolves each such set once. A Jinja wrapper holds its model's
 * tokenizer, which dies with the model: it is resolved anew for every model instead.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';

type NodeLlamaCpp = typeof import('node-llama-cpp');
type LlamaModel = import('node-llama-cpp').LlamaModel;
type ChatWrapper = import('node-llama-cpp').ChatWrapper;

const resolvedWrappers = new Map<string, ChatWrapper>();

/** GGUF metadata holds 64-bit integers as bigint, which JSON does not. */
const bigintAsText = (_key: string, value: unknown) => (typeof value === 'bigint' ? `${value}n` : value);

/** What resolving reads of a model, as one digest. */
function resolutionKey(model: LlamaModel): string {
  const metadata = model.fileInfo.metadata;
  return createHash('sha256')
    .update(JSON.stringify([metadata.general?.architecture, metadata.general?.name, path.basename(model.filename ?? ''), model.tokens.bosString ?? null, metadata.tokenizer ?? null], bigintAsText))
    .digest('hex');
}

export function chatWrapperFor(nodeLlamaCpp: NodeLlamaCpp, model: LlamaModel): ChatWrapper {
  const key = resolutionKey(model);
  const known = resolvedWrappers.get(key);
  if (known) return known;
  const wrapper = nodeLlamaCpp.resolveChatWrapper(model);
  if (!(wrapper instanceof nodeLlamaCpp.JinjaTemplateChatWrapper)) resolvedWrappers.set(key, wrapper);
  return wrapper;
}
