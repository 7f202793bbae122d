/**
 * The consoles in a real browser against a test app whose API listens on a real port (with its own worker), and
 * the checks every console test shares: signing in by pasting a token, an axe-core scan, CSP violations.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { expect } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp } from './app.js';
import { listenOnRealPort } from './cli-process.js';
import { launchBrowser } from './browser.js';

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface ConsoleFixture {
  app: TestApp;
  baseUrl: string;
  browser: Browser;
  /** A fresh page (own sessionStorage) that records console errors and CSP violations. */
  page(): Promise<ConsolePage>;
  close(): Promise<void>;
}

export interface ConsolePage {
  page: Page;
  /** Errors the page logged (a CSP violation is one). */
  errors: string[];
  signIn(token: string, route?: string): Promise<void>;
}

export async function startConsoleFixture(): Promise<ConsoleFixture> {
  const app = await startTestApp();
  const baseUrl = await listenOnRealPort(app);
  const browser = await launchBrowser();
  const pages: Page[] = [];
  return {
    app,
    baseUrl,
    browser,
    async page() {
      const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      pages.push(page);
      const errors: string[] = [];
      page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      page.on('pageerror', (e) => errors.push(e.message));
      return {
        page,
        errors,
        async signIn(token, route = '') {
          await page.goto(`${baseUrl}/console/${route ? `#/${route}` : ''}`);
          await page.getByLabel('Token').fill(token);
          await page.getByRole('button', { name: 'Sign in' }).click();
          await page.getByRole('button', { name: 'Sign out' }).waitFor();
        },
      };
    },
    async close() {
      await browser.close();
      await app.close();
    },
  };
}

/** axe-core in the page (evaluated through the driver, so the page's CSP need not allow it): serious or critical. */
export async function seriousAccessibilityViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: { run(): Promise<{ violations: { id: string; impact: string; help: string; nodes: unknown[] }[] }> };
      }
    ).axe;
    const result = await axe.run();
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length }));
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes} nodes)`);
}

export function expectNoPageErrors(errors: string[]): void {
  expect(errors, 'errors in the page (a CSP violation shows here)').toEqual([]);
}

/**
 * With LETHE_CONSOLE_SCREENSHOTS=1 (`npm run docs:screenshots`), saves the page as docs/console-{name}.png for the
 * consoles' page (docs/consoles.md); otherwise does nothing.
 */
export async function screenshotForDocs(page: Page, name: string): Promise<void> {
  if (process.env.LETHE_CONSOLE_SCREENSHOTS !== '1') return;
  const file = new URL(`../../docs/console-${name}.png`, import.meta.url);
  fs.mkdirSync(new URL('.', file), { recursive: true });
  await page.screenshot({ path: file.pathname, fullPage: true });
}
