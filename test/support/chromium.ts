/**
 * Debian's Chromium driven by playwright-core for the browser tests: the path (CHROMIUM_PATH, else
 * /usr/bin/chromium, which .ci/run installs) and the flags a headless Chromium needs on a machine
 * with a closed network (no background networking, component updates or sync reaching out).
 * A missing Chromium fails the test: it is a peer, never a reason to skip.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** FLOWGATE_CONSOLE_SCREENSHOTS=<dir>: where the browser tests keep their screenshots (docs/images/ takes some of them). */
const SHOTS = process.env.FLOWGATE_CONSOLE_SCREENSHOTS;

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: install Debian's chromium package (.ci/run does) or set CHROMIUM_PATH`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}

/** A full-page screenshot of `page` as <name>.png in FLOWGATE_CONSOLE_SCREENSHOTS; nothing when it is not set. */
export async function shot(page: Page, name: string): Promise<void> {
  if (SHOTS) await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/** The text of `selector` once it matches `pattern`; the page may reload or be redrawn meanwhile (live updates do). */
export async function waitForText(page: Page, selector: string, pattern: RegExp, timeoutMs = 45_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      last = (await page.textContent(selector, { timeout: 2000 })) ?? '';
      if (pattern.test(last)) return last;
    } catch { /* reloading */ }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${selector} never matched ${pattern}; last: ${JSON.stringify(last)}`);
}
