// Preloaded with --import: records every module URL the process resolves into the file
// named by RUBRICATE_RECORD_IMPORTS, one per line (the import test reads it).
import { register } from 'node:module';

const hooks = `
import { appendFileSync } from 'node:fs';
const out = process.env.RUBRICATE_RECORD_IMPORTS;
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (out) appendFileSync(out, result.url + '\\n');
  return result;
}
`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);
