/**
 * The browser tests' Chromium: one per test worker, launched when a file first asks for a
 * context and closed when the worker ends. Each file opens its own context (pages, storage and
 * viewport of its own), which costs a few milliseconds where a launch costs about a second of CPU.
 */
import type { Browser } from 'playwright-core';
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
    return async (options) => openHeadlessContext(await (started ??= startHeadlessChromium()), options);
  },
);
