// Debian's chromium driven by playwright-core: no browser is ever downloaded. One launch per test file;
// contexts (one per signed-in operator) are cheap.
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

export const CHROMIUM = process.env.MALHA_CHROMIUM ?? "/usr/bin/chromium";

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run \`bash scripts/stack.sh install\` (installs Debian's chromium)`);
  // playwright gives every launch a fresh temporary profile (--user-data-dir) and adds --headless itself.
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
