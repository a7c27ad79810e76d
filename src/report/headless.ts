/**
 * Headless Chromium for the report's browser tests and benchmark: Debian's `chromium`
 * driven by playwright-core, with a throwaway profile and every background network feature
 * off (otherwise it tries to reach update and sync servers).
 */
import { existsSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';

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

export interface HeadlessContextOptions {
  width?: number;
  height?: number;
  deviceScaleFactor?: number;
}

/** Starts Chromium headless; playwright gives it a throwaway profile and removes it on close. `launchTimeoutMs`: playwright's 30 s unless given. */
export async function startHeadlessChromium(launchTimeoutMs?: number): Promise<Browser> {
  // playwright-core is a dev dependency: load it only when a browser is actually wanted.
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: chromiumPath, headless: true, args: chromiumArguments, ...(launchTimeoutMs === undefined ? {} : { timeout: launchTimeoutMs }) });
}

/** A fresh context of a running Chromium (its own pages, storage and viewport); closing it leaves the browser running. */
export async function openHeadlessContext(browser: Browser, options: HeadlessContextOptions = {}): Promise<HeadlessBrowser> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1360, height: options.height ?? 900 },
    deviceScaleFactor: options.deviceScaleFactor ?? 1,
  });
  return { context, close: () => context.close() };
}

/** Chromium with one context, both closed together. */
export async function launchHeadlessChromium(options: HeadlessContextOptions = {}): Promise<HeadlessBrowser> {
  const browser = await startHeadlessChromium();
  const { context } = await openHeadlessContext(browser, options);
  return {
    context,
    async close() {
      await context.close();
      await browser.close();
    },
  };
}

/**
 * Opens a file:// page (or a page of the origin `allowOrigin`) with every other request refused,
 * collecting page errors, console errors and attempted requests: a self-contained report must
 * show none of them. Functions handed to
 * the page (`$$eval`, `evaluate`) run in Chromium but are compiled as Node code, without the
 * DOM lib: the elements they get are untyped, and they reach the page's globals through one
 * (`element.ownerDocument`).
 */
export async function openOfflinePage(browser: HeadlessBrowser, url: string, options: { allowOrigin?: string } = {}): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  // A page of `rubricate view` comes from its loopback server: that origin (only) is allowed too.
  const allowed = options.allowOrigin;
  await page.route(/^(?!file:)/, (route) => {
    const requested = route.request().url();
    if (allowed !== undefined && new URL(requested).origin === allowed) return route.continue();
    errors.push(`network request: ${requested}`);
    return route.abort();
  });
  await page.goto(url);
  return { page, errors };
}
