import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's Chromium, driven by playwright-core (it downloads no browser of its own). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The `skip` of a browser test suite: a reason when there is no Chromium to drive. */
export const skipWithoutChromium: string | false = existsSync(CHROMIUM)
  ? false
  : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;

/**
 * A headless Chromium. Without the background-networking flags it keeps trying to reach Google's
 * hosts, which this sandbox refuses, many connections at a time.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

const AXE_SOURCE = path.resolve('node_modules', 'axe-core', 'axe.min.js');
let axeScript: Promise<string> | undefined;
const axeSource = () => (axeScript ??= readFile(AXE_SOURCE, 'utf8'));

/** One axe-core finding, as much as a failure message needs. */
export interface AccessibilityViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * Runs axe-core in the page as it is now and fails on any violation of impact `serious` or
 * `critical`, naming each rule and the elements it found; `label` names the page in that message
 * (`checkout ar 390×844`). Returns the lesser findings, for a test that wants to look at them.
 */
export async function checkAccessibility(page: Page, label = page.url()): Promise<AccessibilityViolation[]> {
  // Evaluated rather than added as a <script>: the pages' CSP refuses any script without their nonce.
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(await axeSource());
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: AxeRunner }).axe;
    const result = await axe.run({ resultTypes: ['violations'] });
    return result.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact ?? null,
      help: violation.help,
      targets: violation.nodes.map((node) => node.target.map(String).join(' ')),
    }));
  });
  const blocking = violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
  assert.deepEqual(
    blocking.map(
      (violation) => `${violation.impact} ${violation.id}: ${violation.help} (${violation.targets.join(', ')})`,
    ),
    [],
    `accessibility of ${label}`,
  );
  return violations;
}

/** The part of axe-core's browser API the check calls (its own types describe far more). */
interface AxeRunner {
  run(options: { resultTypes: string[] }): Promise<{
    violations: { id: string; impact?: string | null; help: string; nodes: { target: (string | string[])[] }[] }[];
  }>;
}
