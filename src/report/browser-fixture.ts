/**
 * The browser tests' Chromium: one per test worker, launched when a file first asks for a
 * context and closed when the worker ends. Each file opens its own context (pages, storage and
 * viewport of its own), which costs a few milliseconds where a launch costs about a second of CPU.
 * Its waits are hang guards, scaled with the machine's load (src/testing/hang-guard.ts).
 */
import type { Browser } from 'playwright-core';
import { hangGuard } from '../testing/hang-guard.js';
import { test } from '../testing/vitest-fixtures.js';
import { openHeadlessContext, startHeadlessChromium, type HeadlessBrowser, type HeadlessContextOptions } from './headless.js';

export type OpenBrowserContext = (options?: HeadlessContextOptions) => Promise<HeadlessBrowser>;

export const browserTest = test.extend(
  'openBrowserContext',
  { scope: 'worker' },
  // eslint-disable-next-line no-empty-pattern
  async ({}, { onCleanup }): Promise<OpenBrowserContext> => {
    let started: Promise<Browser> | undefined;
    onCleanup(async () => {
      await started?.then((browser) => browser.close(), () => undefined);
    });
    return async (options) => {
      const opened = await openHeadlessContext(await (started ??= startHeadlessChromium(hangGuard(30_000))), options);
      // Playwright's waits (a selector, a navigation, a download) are hang guards too: scaled with the load.
      opened.context.setDefaultTimeout(hangGuard(30_000));
      opened.context.setDefaultNavigationTimeout(hangGuard(30_000));
      return opened;
    };
  },
);
