/**
 * Settings a judge backend owns: a backend added with `registerJudge` declares the schema of its
 * own settings (as an AI SDK provider parses its `providerOptions`), and a model spec carries
 * them in `settings`. They are checked in the same pass as the rest of the run spec, so a wrong
 * or unknown one is refused by name before anything is built; their names are the backend's, so
 * they have no flag and no leaf in `settingPaths`.
 */
import { z } from 'zod';

/** Settings schemas of the registered backends that declare one, by spec prefix. */
const schemas = new Map<string, z.ZodType>();

/** A model spec's `settings`: an object whose fields the spec's backend defines. */
export const backendSettingsField = z.record(z.string(), z.unknown());

/** Records (or, with none, forgets) the settings schema of the backend registered for `prefix`. */
export function registerBackendSettings(prefix: string, schema: z.ZodType | undefined): void {
  if (schema) schemas.set(prefix, schema);
  else schemas.delete(prefix);
}

/** The backend prefix of a model spec's `model` (`echo` of `echo:x`; the whole of `none`). */
export function backendPrefixOf(model: string): string {
  const separator = model.indexOf(':');
  return separator === -1 ? model : model.slice(0, separator);
}

/**
 * Checks a model spec's `settings` against its backend's schema, each issue placed under
 * `settings`. A spec that names no model, or a backend that declares no settings, is left to
 * the backend's own check (`unreadSettings`: settings it does not read are refused by name).
 */
export function checkBackendSettings(spec: { model?: string; settings?: Record<string, unknown> }, context: z.RefinementCtx): void {
  if (spec.settings === undefined || spec.model === undefined) return;
  const schema = schemas.get(backendPrefixOf(spec.model));
  if (!schema) return;
  const parsed = schema.safeParse(spec.settings);
  if (parsed.success) return;
  for (const issue of parsed.error.issues) context.addIssue({ ...issue, path: ['settings', ...issue.path] } as Parameters<typeof context.addIssue>[0]);
}
