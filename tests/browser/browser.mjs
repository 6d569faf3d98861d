/** Debian's Chromium, headless, driven by playwright-core: the one way the browser tests launch it. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.BG_CHROMIUM ?? '/usr/bin/chromium';

/** `contextOptions`: playwright context options, e.g. a phone's viewport, deviceScaleFactor, isMobile, hasTouch. */
export async function launch(extraArgs = [], contextOptions = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'bloomgate-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--no-first-run', ...extraArgs],
    ...contextOptions,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
