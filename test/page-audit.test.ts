/**
 * The page audit (issue 22): every page a person can see — the authorization page in each of its
 * states, the landing page, every console page — on a console full of realistic data (long names
 * with and without spaces, long emails and user agents, more rows than a page), in real Chromium
 * at 1280 × 800 and 390 × 844. On each: no horizontal page scroll; every table (and its scroll
 * container) inside the window and not scrolling sideways; no serious or critical axe-core
 * violation; on the phone, targets of at least 24 × 24 px (WCAG 2.2 2.5.8, with its inline,
 * spacing and equivalent exceptions; see test/helpers/page-audit.ts). A failure lists every
 * finding as "page @ size: check: element and what is wrong".
 *
 * The states are those `npm run screenshots` photographs (test/helpers/page-tour.ts); a console
 * GET route nobody visits fails the suite, so a new page is audited from the start.
 *
 * @engine-independent how pages are laid out and how accessible they are does not depend on the
 * engine that stored their data; what they show is checked on both engines (test/console/,
 * test/authorize-page.test.ts), so this suite runs once (vitest.config.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CallbackServer, haveChromium, launchChromium, startCallbackServer, closeAll } from './helpers/browser.ts';
import { type Auditor, auditor } from './helpers/page-audit.ts';
import {
  type PageState,
  pageTour,
  type Seed,
  seedConsole,
  signInAdmin,
  type Size,
  VIEWPORTS,
} from './helpers/page-tour.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const ROUTES = new URL('../src/console/routes/', import.meta.url);

/** The console's GET routes, as written in src/console/routes/ (relative to /console). */
function consoleGetRoutes(): string[] {
  const routes = new Set<string>();
  for (const file of readdirSync(ROUTES).filter((name) => name.endsWith('.ts'))) {
    const source = readFileSync(new URL(file, ROUTES), 'utf8');
    for (const match of source.matchAll(/scope\.get(?:<[^(]*>)?\(\s*['`]([^'`]+)['`]/g)) routes.add(match[1]!);
  }
  return [...routes].sort();
}

describe.skipIf(!haveChromium)('every page, with realistic data, at 1280 × 800 and 390 × 844', () => {
  let server: TestServer;
  let callback: CallbackServer;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let seed: Seed;
  let tour: PageState[];
  const viewers: Record<string, { context: BrowserContext; page: Page; auditor: Auditor }> = {};

  beforeAll(async () => {
    // WebAuthn's relying party must be a domain name: the console is at http://localhost:<port>.
    [server, callback, browser] = await Promise.all([
      // Every page there is: action approvals (issue 39) are off by default.
      startTestServer({ host: 'localhost', env: { ACTION_APPROVALS: 'on' } }),
      startCallbackServer(),
      launchChromium(),
    ]);
    seed = await seedConsole(server.ctx, { data: 'stress', baseUrl: server.baseUrl, callback });
    tour = pageTour(seed, server.baseUrl, (seconds) => server.clock.advance(seconds));
    for (const viewer of ['visitor', 'admin']) {
      const context = await browser.newContext({ viewport: VIEWPORTS.desktop });
      const page = await context.newPage();
      page.setDefaultTimeout(10_000);
      viewers[viewer] = { context, page, auditor: auditor(context) };
    }
    await signInAdmin(viewers.admin!.context, viewers.admin!.page, server.baseUrl, seed);
  }, 120_000);
  afterAll(() => closeAll(browser, callback, server));

  it('visits every GET route of the console', () => {
    const visited = new Set(tour.map((state) => state.route));
    // The history's CSV export is a download, not a page: test/console/history.test.ts covers it.
    // The approvals' event stream is not a page either: test/console/approvals.test.ts covers it.
    const pages = consoleGetRoutes().filter((route) => !route.endsWith('.csv') && route !== '/approvals/events');
    expect(pages.filter((route) => !visited.has(route))).toEqual([]);
  });

  // The checks themselves, on a page made to fail each (and to pass each exception).
  it('finds overflow, an axe fault and crowded small targets, and allows inline links and spaced targets', async () => {
    const { context, auditor: audit } = viewers.visitor!;
    const page = await context.newPage();
    try {
      await page.setViewportSize(VIEWPORTS.phone);
      await page.setContent(`<!doctype html><html lang="en"><head><title>Checks</title></head><body><main>
<h1>Checks</h1>
<p>A sentence with <a href="#a" style="font-size:12px">an inline link</a> in it.</p>
<p style="display:flex;gap:40px"><button style="padding:0;width:16px;height:16px">a</button><button style="padding:0;width:16px;height:16px">b</button></p>
<p style="display:flex;gap:0"><button id="tight" style="padding:0;width:16px;height:16px">c</button><button style="padding:0;width:16px;height:16px">d</button></p>
<table aria-label="Wide" style="display:block;overflow-x:auto"><tr><td style="white-space:nowrap">${'wide '.repeat(80)}</td></tr></table>
<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">
</main></body></html>`);
      const findings = (await audit.audit(page, true)).map((finding) => `${finding.check}: ${finding.detail}`);
      expect(findings).toEqual([
        expect.stringMatching(/^table-overflow: table "Wide": \d+ px of content in \d+ px/),
        expect.stringMatching(/^axe: image-alt \(critical\) at img/),
        expect.stringMatching(/^axe: scrollable-region-focusable \(serious\) at table/),
        expect.stringMatching(/^target-size: #tight "c": 16 × 16 px/),
        expect.stringMatching(/^target-size: main > p > button "d": 16 × 16 px/),
      ]);
    } finally {
      await page.close();
    }
  });

  for (const size of ['desktop', 'phone'] as const satisfies Size[]) {
    const { width, height } = VIEWPORTS[size];
    it(`has no overflow, no serious accessibility fault${size === 'phone' ? ' and no small target' : ''} at ${width} × ${height}`, async () => {
      const findings: string[] = [];
      for (const viewer of Object.values(viewers)) await viewer.page.setViewportSize(VIEWPORTS[size]);
      for (const state of tour) {
        const { page, auditor: audit } = viewers[state.viewer]!;
        await state.visit(page);
        for (const finding of await audit.audit(page, size === 'phone'))
          findings.push(`${state.name} @ ${width}×${height}: ${finding.check}: ${finding.detail}`);
      }
      // The list alone (no diff against []): one line per thing to fix.
      if (findings.length > 0) expect.fail(`${findings.length} findings:\n${findings.join('\n')}\n`);
    }, 120_000);
  }
});
