/**
 * `npm run api-examples`: writes `test/api-examples.test-d.ts`, the `@example` of every export of
 * the package and its subpath entries as one module that `npm run typecheck` compiles
 * (`test/support/api-examples.ts`). `test/api-examples.test.ts` fails while an export has no
 * example or the file is not the current one.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { examplesModule, examplesPath, exportedValues } from '../test/support/api-examples.js';
import { writeFileAtomic } from '../src/util/files.js';

const root = fileURLToPath(new URL('..', import.meta.url));
await writeFileAtomic(join(root, examplesPath), examplesModule(root, exportedValues(root)));
process.stdout.write(`wrote ${examplesPath}\n`);
