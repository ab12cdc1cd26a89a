import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's Chromium for browser tests, driven by playwright-core (which brings
 * no browser of its own). Without it browser tests are skipped with a message;
 * on CI that is a failure.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const HAVE_CHROMIUM = existsSync(CHROMIUM);

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** `it`, or `it.skip` with a warning naming `what` when Chromium is missing. */
export function browserIt(what: string): jest.It {
  if (HAVE_CHROMIUM) return it;
  if (process.env.CI) throw new Error(`Chromium is missing at ${CHROMIUM}: .ci/run installs the Debian package chromium`);
  console.warn(`${what} browser tests SKIPPED: no Chromium at ${CHROMIUM} (Debian: apt-get install chromium, or set CHROMIUM_PATH)`);
  return it.skip;
}

export const launchChromium = (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
