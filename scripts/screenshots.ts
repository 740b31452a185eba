/**
 * npm run screenshots: pictures of every page a person sees, in every state, for the README and
 * the docs, written to docs/screenshots/: the authorization page first (waiting, signed in and
 * continuing, manual approval, expired, an error), then the landing page and every console page,
 * each at 1280 × 800 (`<name>.png`) and 390 × 844 (`<name>-phone.png`). The states and the data
 * are the page audit's (test/helpers/page-tour.ts), on a server with a temporary SQLite database,
 * through Debian's Chromium.
 *
 *   npm run screenshots                                  docs/screenshots/, the docs' data
 *   npm run screenshots -- --out DIR                     another directory (before/after pictures)
 *   npm run screenshots -- --out DIR --data stress       the audit's data: long names, long emails
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.ts';
import { startServer } from '../src/server.ts';
import { launchChromium, startCallbackServer } from '../test/helpers/browser.ts';
import { freePort } from '../test/helpers/net.ts';
import { type DataSet, pageTour, seedConsole, signInAdmin, VIEWPORTS } from '../test/helpers/page-tour.ts';

const DOCS = fileURLToPath(new URL('../docs/screenshots/', import.meta.url));

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { out: { type: 'string' }, data: { type: 'string', default: 'docs' } },
  });
  if (values.data !== 'docs' && values.data !== 'stress') throw new Error('--data is docs or stress');
  const out = values.out ? resolve(values.out) : DOCS;
  mkdirSync(out, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'agentauth-screenshots-'));
  const port = await freePort();
  // A clock the script can move forward, for the expired authorization request.
  let offset = 0;
  const clock = () => Math.floor(Date.now() / 1000) + offset;
  const config = loadConfig({
    PORT: String(port),
    HOST: '127.0.0.1',
    // WebAuthn (the passkeys on the account page) needs a domain name as its relying party.
    BASE_URL: `http://localhost:${port}`,
    DATABASE_URL: `sqlite:${join(dir, 'agentauth.db')}`,
    JWT_SECRET: 'screenshots-secret-of-at-least-32-bytes!',
    LOG_LEVEL: 'silent',
    // Every page there is: action approvals (issue 39) are off by default.
    ACTION_APPROVALS: 'on',
  });
  const server = await startServer(config, { clock, warn: () => {} });
  const callback = await startCallbackServer();
  const browser = await launchChromium();
  const failed: string[] = [];
  try {
    const seed = await seedConsole(server.ctx, { data: values.data as DataSet, baseUrl: config.baseUrl, callback });
    const tour = pageTour(seed, config.baseUrl, (seconds) => {
      offset += seconds;
    });
    const viewers = {
      visitor: await browser.newContext({ viewport: VIEWPORTS.desktop }),
      admin: await browser.newContext({ viewport: VIEWPORTS.desktop }),
    };
    const pages = { visitor: await viewers.visitor.newPage(), admin: await viewers.admin.newPage() };
    for (const page of Object.values(pages)) page.setDefaultTimeout(15_000);
    await signInAdmin(viewers.admin, pages.admin, config.baseUrl, seed);
    for (const state of tour) {
      for (const size of ['desktop', 'phone'] as const) {
        const page = pages[state.viewer];
        const file = join(out, `${state.name}${size === 'phone' ? '-phone' : ''}.png`);
        try {
          await page.setViewportSize(VIEWPORTS[size]);
          await state.visit(page);
          await page.screenshot({ path: file, fullPage: true });
          process.stdout.write(`${relative(process.cwd(), file)}\n`);
        } catch (error) {
          // One page that cannot be reached (another checkout's markup) does not stop the rest.
          failed.push(`${state.name} (${size}): ${error instanceof Error ? error.message.split('\n')[0] : error}`);
        }
      }
    }
  } finally {
    await browser.close();
    await callback.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  if (failed.length > 0) throw new Error(`no picture of:\n${failed.join('\n')}`);
}

main().catch((error: unknown) => {
  process.stderr.write(`screenshots failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
