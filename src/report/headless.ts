/**
 * Headless Chromium for the report's browser tests and benchmark: Debian's `chromium`
 * driven by playwright-core, with a throwaway profile and every background network feature
 * off (otherwise it tries to reach update and sync servers).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';

export const chromiumPath = '/usr/bin/chromium';

export const chromiumArguments = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
];

export function chromiumAvailable(): boolean {
  return existsSync(chromiumPath);
}

export interface HeadlessBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchHeadlessChromium(options: { width?: number; height?: number; deviceScaleFactor?: number } = {}): Promise<HeadlessBrowser> {
  // playwright-core is a dev dependency: load it only when a browser is actually wanted.
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'rubricate-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    // The fresh profile directory is passed as the user data dir by playwright itself.
    args: chromiumArguments,
    viewport: { width: options.width ?? 1360, height: options.height ?? 900 },
    deviceScaleFactor: options.deviceScaleFactor ?? 1,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Opens a file:// page with every other request refused, collecting page errors, console errors
 * and attempted requests: a self-contained report must show none of them.
 */
export async function openOfflinePage(browser: HeadlessBrowser, url: string): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  await page.route(/^(?!file:)/, (route) => {
    errors.push(`network request: ${route.request().url()}`);
    return route.abort();
  });
  await page.goto(url);
  return { page, errors };
}
