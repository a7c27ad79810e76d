/**
 * Runs before each test file (vitest `setupFiles`). Workers keep their modules from one file to
 * the next (`isolate: false` in vitest.config.ts), so what a file leaves in process-wide state
 * would reach the next one. The one such state is the set of secrets registered for redaction
 * (every CLI run in a test registers its keys): each file starts without any, as a process does.
 */
import { clearRegisteredSecrets } from '../../src/util/redact.js';

clearRegisteredSecrets();
