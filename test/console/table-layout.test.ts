/**
 * The console's tables in a real browser at a desktop's and a phone's size (issue 22): with
 * realistic data (long names, emails, user agents, many rows) no page scrolls sideways, every
 * table lies inside the viewport, on a phone rows are cards whose buttons and links are at least
 * 24 x 24 px, and the header is one row.
 *
 * @engine-independent where the tables lie and how big their targets are does not depend on the
 * engine that stored their rows; what they show is checked on both engines by the rest of
 * test/console/, so this suite runs once (vitest.config.ts).
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveChromium, launchChromium } from '../helpers/browser.ts';
import { type ConsoleData, seedConsole } from '../helpers/console-data.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const SIZES = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const;

interface Measured {
  scrollWidth: number;
  clientWidth: number;
  tables: Array<{ id: string; left: number; right: number; rows: number; cards: boolean; scrolls: boolean }>;
  /** Buttons, links and toggles inside tables smaller than 24 x 24 px. */
  small: string[];
  /**
   * The header's height, and how far apart its items' vertical middles are (one row: a few px):
   * all of them, the navigation's links, and the brand with Sign out.
   */
  header: { height: number; spread: number; navSpread: number; endsSpread: number };
}

/** What the test reads of a page: its width, its tables' boxes, its small targets, its header. */
function measure(page: Page): Promise<Measured> {
  return page.evaluate(() => {
    const tables = [...document.querySelectorAll('main table')]
      .filter((table) => table.getClientRects().length > 0 && !table.closest('details:not([open])'))
      .map((table, i) => {
        const box = table.getBoundingClientRect();
        return {
          id: table.id || `table ${i + 1}`,
          left: box.left,
          right: box.right,
          rows: table.querySelectorAll('tbody tr').length,
          cards: getComputedStyle(table.querySelector('tbody tr') ?? table).display === 'block',
          // A table that scrolls inside itself hides columns as surely as the page would.
          scrolls: table.scrollWidth > table.clientWidth + 1,
        };
      });
    const small = [...document.querySelectorAll('main table :is(a, button, summary, input)')]
      .map((element) => ({ element, box: element.getBoundingClientRect() }))
      .filter(({ box }) => box.width > 0 && (box.width < 24 || box.height < 24))
      .map(({ element, box }) => `${element.tagName} "${element.textContent?.trim()}" ${box.width}x${box.height}`);
    const header = document.querySelector('.console-header')!;
    // Rows: the navigation's links on one row, the brand and Sign out on one row (on a phone the
    // navigation has a row of its own below them; on a desktop all three share one).
    const spread = (selector: string) => {
      const middles = [...header.querySelectorAll(selector)].map((element) => {
        const box = element.getBoundingClientRect();
        return box.top + box.height / 2;
      });
      return Math.max(...middles) - Math.min(...middles);
    };
    return {
      scrollWidth: document.documentElement.scrollWidth,
      clientWidth: document.documentElement.clientWidth,
      tables,
      small,
      header: {
        height: header.getBoundingClientRect().height,
        spread: spread('.brand, nav a, .sign-out button'),
        navSpread: spread('nav a'),
        endsSpread: spread('.brand, .sign-out button'),
      },
    };
  });
}

describe.skipIf(!haveChromium)('console tables at 1280 × 800 and 390 × 844 (Chromium)', () => {
  let server: TestServer;
  let browser: Browser;
  let data: ConsoleData;

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
    data = await seedConsole(server);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const pages = () => [
    { path: `/console/agents/${data.agentId}`, as: data.memberCookie, tables: ['connected-sites', 'history-table'] },
    { path: `/console/websites/${data.clientId}`, as: data.memberCookie, tables: ['history-table'] },
    { path: '/console/websites', as: data.memberCookie, tables: ['table 1'] },
    { path: '/console/account', as: data.memberCookie, tables: ['table 1', 'table 2'] },
    { path: '/console/admin', as: data.adminCookie, tables: ['table 1'] },
    { path: '/console/admin/events', as: data.adminCookie, tables: ['activity'] },
  ];

  for (const size of SIZES) {
    it(`lays out every table for the ${size.name} (${size.width} × ${size.height}): no sideways scroll, nothing outside the viewport`, async () => {
      const context = await browser.newContext({ viewport: { width: size.width, height: size.height } });
      try {
        for (const shown of pages()) {
          await context.clearCookies();
          await context.addCookies([{ name: 'agentauth_console', value: shown.as, url: server.baseUrl }]);
          const page = await context.newPage();
          const response = await page.goto(`${server.baseUrl}${shown.path}`);
          expect(response?.status(), shown.path).toBe(200);
          const measured = await measure(page);
          expect(measured.scrollWidth, shown.path).toBeLessThanOrEqual(measured.clientWidth);
          expect(
            measured.tables.map((table) => table.id),
            shown.path,
          ).toEqual(shown.tables);
          for (const table of measured.tables) {
            expect(table.rows, `${shown.path} ${table.id}`).toBeGreaterThan(0);
            expect(table.left, `${shown.path} ${table.id}`).toBeGreaterThanOrEqual(0);
            expect(table.right, `${shown.path} ${table.id}`).toBeLessThanOrEqual(size.width);
            expect(table.scrolls, `${shown.path} ${table.id}`).toBe(false);
            // Cards on the phone, columns on the desktop.
            expect(table.cards, `${shown.path} ${table.id}`).toBe(size.name === 'phone');
          }
          if (size.name === 'phone') expect(measured.small, shown.path).toEqual([]);
          // One row on the desktop; on the phone, two at most: brand and Sign out, then the navigation.
          if (size.name === 'desktop') expect(measured.header.spread, `${shown.path} header`).toBeLessThan(8);
          expect(measured.header.navSpread, `${shown.path} navigation`).toBeLessThan(8);
          expect(measured.header.endsSpread, `${shown.path} brand and sign out`).toBeLessThan(8);
          await page.close();
        }
      } finally {
        await context.close();
      }
    });
  }

  it('keeps the Actions of the accounts table and the Detail of the activity in view at 1280 px', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      await context.addCookies([{ name: 'agentauth_console', value: data.adminCookie, url: server.baseUrl }]);
      const page = await context.newPage();
      for (const [path, heading] of [
        ['/console/admin', 'Actions'],
        ['/console/admin/events', 'Detail'],
      ] as const) {
        await page.goto(`${server.baseUrl}${path}`);
        const cell = page.locator(`main table th:text-is("${heading}")`);
        const box = (await cell.boundingBox())!;
        expect(box.x + box.width, path).toBeLessThanOrEqual(1280);
        // Nothing inside the table is cut off by a scrolling box.
        const clipped = await page.evaluate(() =>
          [...document.querySelectorAll('main table, main table *')]
            .filter(
              (element) =>
                !element.closest('.visually-hidden, thead') &&
                element.scrollWidth > element.clientWidth + 1 &&
                getComputedStyle(element).overflowX !== 'visible',
            )
            .map((element) => `${element.tagName}.${element.className} ${element.scrollWidth}>${element.clientWidth}`),
        );
        expect(clipped, path).toEqual([]);
      }
    } finally {
      await context.close();
    }
  });
});
