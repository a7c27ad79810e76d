/**
 * Runs before each test file (vitest `setupFiles`). Workers keep their modules from one file to
 * the next (`isolate: false` in vitest.config.ts), so what a file leaves in process-wide state
 * would reach the next one. The one such state is the set of secrets registered for redaction
 * (every CLI run in a test registers its keys): each file starts without any, as a process does.
 * The CLI also runs in the worker (`runCliInProcess`), so the worker, like every child, gets an
 * environment without judge endpoints or keys: no test can reach a real provider.
 */
import { clearRegisteredSecrets } from '../../src/util/redact.js';
import { judgeEnvironmentVariables } from '../helpers.js';

clearRegisteredSecrets();
for (const key of judgeEnvironmentVariables) delete process.env[key];
