/**
 * `npm run config-schema`: writes the JSON Schema of `--config` files (`assets/config.schema.json`)
 * from the options of the commands a config is written for (`src/cli/config-schema.ts`). A test
 * fails while the file is not the current one.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildProgram } from '../src/cli/main.js';
import { configSchemaPath, configSchemaText } from '../src/cli/config-schema.js';
import { writeFileAtomic } from '../src/util/files.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const program = await buildProgram({ stdout: () => undefined, stderr: () => undefined, signal: new AbortController().signal, exitCode: 0 });
await writeFileAtomic(join(root, configSchemaPath), configSchemaText(program));
process.stdout.write(`wrote ${configSchemaPath}\n`);
