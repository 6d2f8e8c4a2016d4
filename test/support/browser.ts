// Headless Chromium for tests that must see a page as a browser does:
// Debian's `chromium` (or CHROMIUM_PATH), driven by playwright-core, with the
// flags CI uses and a fresh profile per launch. `findChromium()` returns
// undefined when none is installed, and the caller skips with that reason.
import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext } from 'playwright-core';

const CANDIDATES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

/** The Chromium executable, or undefined. */
export function findChromium(): string | undefined {
  const explicit = process.env.CHROMIUM_PATH;
  if (explicit && existsSync(explicit)) return explicit;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    for (const name of CANDIDATES) {
      const candidate = path.join(dir, name);
      if (dir !== '' && existsSync(candidate)) return candidate;
    }
  }
  return undefined;
}

export const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'];

/** A browser context on a fresh `--user-data-dir`; close it when done. */
export async function launchChromium(executablePath: string): Promise<BrowserContext> {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(path.join(os.tmpdir(), 'nrh-chromium-profile-'));
  return chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1500, height: 950 },
  });
}

/** Where tests keep files for people to look at (gitignored). */
export const ARTIFACTS = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../.tmp/artifacts');
