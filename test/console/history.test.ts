/**
 * Sign-in histories over real HTTP (issue 22): the filters of an agent's and a website's history
 * (each alone, together, paged, refused), their CSV export (headers, rows, escaping, whose rows),
 * and agent sign-ins in the admin's activity.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwnedAgent, createOwnedClient } from '../helpers/owned.ts';

import { recordConsoleEvent } from '../../src/console/events.ts';
import type { AccountRecord } from '../../src/store/accounts.ts';
import { type ConsoleSession, createPasswordAccount, noticeOf, type Page, signIn } from '../helpers/console.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const HOUR = 3600;
const DAY = 86400;

let server: TestServer;
let owner: AccountRecord;
let session: ConsoleSession;
/** The owner's agent, the owner's website, another member's website the agent also signs in to. */
let agent: { id: string; secret: string };
let own: { id: string; secret: string };
let foreign: { id: string; secret: string };
let stranger: ConsoleSession;
let admin: ConsoleSession;
/** Every event recorded for the agent, newest first: its model is its marker. */
const recorded: Array<{ model: string; client: string; outcome: string; at: number }> = [];

/** Events at fixed ages: 3 per hour over the last 10 days, alternating websites and outcomes. */
const OUTCOMES = ['authenticated', 'invalid_credentials', 'authenticated', 'request_expired', 'throttled'];

beforeAll(async () => {
  server = await startTestServer();
  const { ctx } = server;
  owner = await createPasswordAccount(ctx, { email: 'owner@example.org', name: 'Owner' });
  const other = await createPasswordAccount(ctx, { email: 'other@example.org' });
  const boss = await createPasswordAccount(ctx, { email: 'boss@example.org', role: 'admin' });
  const made = await createOwnedAgent(ctx, owner, 'Research assistant');
  agent = { id: made.agent.id, secret: made.secret };
  const mine = await createOwnedClient(ctx, owner, { name: 'My shop', redirect_uris: 'https://shop.example/cb' });
  own = { id: mine.client.id, secret: mine.secret! };
  const theirs = await createOwnedClient(ctx, other, { name: 'Their site', redirect_uris: 'https://their.example/cb' });
  foreign = { id: theirs.client.id, secret: theirs.secret! };

  const now = server.clock();
  for (let i = 0; i < 60; i++) {
    const event = {
      model: `m-${i}`,
      client: i % 2 === 0 ? own.id : foreign.id,
      outcome: OUTCOMES[i % OUTCOMES.length]!,
      at: now - i * 4 * HOUR,
    };
    recorded.push(event);
    await ctx.store.signIns.record({
      at: event.at,
      agent_id: agent.id,
      request_id: null,
      client_id: event.client,
      model: event.model,
      ip: '192.0.2.1',
      user_agent: 'agentauth-python/0.1.0 (Python 3.11)',
      outcome: event.outcome,
    });
  }
  session = await signIn(server.baseUrl, owner.email);
  stranger = await signIn(server.baseUrl, other.email);
  admin = await signIn(server.baseUrl, boss.email);
});
afterAll(() => server.close());

/** The models (markers) of a page's history rows, in order. */
const modelsOf = (page: Page) =>
  [...page.text.matchAll(/<td data-label="Model" class="long">(m-\d+)<\/td>/g)].map((match) => match[1]!);
const olderLink = (page: Page) =>
  /<a href="([^"#]+)#history" id="history-older">/.exec(page.text)?.[1]?.replaceAll('&amp;', '&');
/** What the filters select, newest first, as the rows' markers. */
const expected = (keep: (event: (typeof recorded)[number]) => boolean) =>
  recorded.filter(keep).map((event) => event.model);

/** All rows of a filtered history, following its Older links. */
async function allPages(as: ConsoleSession, path: string): Promise<string[]> {
  const models: string[] = [];
  let next: string | undefined = path;
  for (let pages = 0; next && pages < 10; pages++) {
    const page = await as.get(next);
    expect(page.status, next).toBe(200);
    models.push(...modelsOf(page));
    next = olderLink(page);
  }
  return models;
}

/** RFC 4180 records: quoted fields with "" for a quote, CRLF between records. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') record.push(field), (field = '');
    else if (c === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      (record = []), (field = ''), i++;
    } else field += c;
  }
  if (field !== '' || record.length > 0) throw new Error('the CSV does not end with CRLF');
  return records;
}

describe("an agent's history", () => {
  const path = () => `/console/agents/${agent.id}`;

  it('filters by website, by outcome and by period, each alone and together, across pages', async () => {
    const now = server.clock();
    const cases: Array<[string, (event: (typeof recorded)[number]) => boolean]> = [
      ['', () => true],
      [`website=${own.id}`, (e) => e.client === own.id],
      [`website=${foreign.id}`, (e) => e.client === foreign.id],
      ['outcome=success', (e) => e.outcome === 'authenticated'],
      ['outcome=failure', (e) => e.outcome !== 'authenticated'],
      ['outcome=throttled', (e) => e.outcome === 'throttled'],
      ['period=24h', (e) => e.at >= now - DAY],
      ['period=7d', (e) => e.at >= now - 7 * DAY],
      [
        `website=${own.id}&outcome=failure&period=7d`,
        (e) => e.client === own.id && e.outcome !== 'authenticated' && e.at >= now - 7 * DAY,
      ],
      ['outcome=success&period=24h', (e) => e.outcome === 'authenticated' && e.at >= now - DAY],
    ];
    for (const [query, keep] of cases) {
      const url = query ? `${path()}?${query}` : path();
      expect(await allPages(session, url), query).toEqual(expected(keep));
    }
    // The Older link keeps the filters; Clear drops them; the CSV link carries them.
    const filtered = await session.get(`${path()}?outcome=failure`);
    expect(olderLink(filtered)).toMatch(new RegExp(`^${path()}\\?outcome=failure&before=`));
    expect(filtered.text).toContain(`<a href="${path()}#history" id="history-clear">`);
    expect(filtered.text).toContain(`href="${path()}/history.csv?outcome=failure" id="history-csv"`);
    // The chosen values are selected in the form.
    expect(filtered.text).toMatch(/<option value="failure" selected>/);
    // Nothing matches: said in words.
    const none = await session.get(`${path()}?website=${own.id}&outcome=request_contested`);
    expect(none.status).toBe(200);
    expect(none.text).toContain('No sign-in matches these filters.');
  });

  it('shows outcomes in words with an icon and a colour, and user agents as people read them', async () => {
    const page = await session.get(path());
    expect(page.text).toContain(
      '<span class="outcome success"><span class="icon" aria-hidden="true">✓</span> Signed in</span>',
    );
    expect(page.text).toContain(
      '<span class="outcome failure"><span class="icon" aria-hidden="true">✗</span> Wrong secret</span>',
    );
    expect(page.text).toContain(
      '<span class="outcome incomplete"><span class="icon" aria-hidden="true">!</span> Request expired</span>',
    );
    // The Python SDK's header is already readable: shown as it is.
    expect(page.text).toContain('agentauth-python 0.1.0 (Python 3.11)');
  });

  it('answers a filter value that is not a choice with the page, 400, and the message beside the filter', async () => {
    const bad: Array<[string, string, string]> = [
      ['website=cli_unknown', 'website', 'Choose a website from the list.'],
      [`website=${encodeURIComponent('x'.repeat(3000))}`, 'website', 'Choose a website from the list.'],
      ['outcome=maybe', 'outcome', 'Choose an outcome from the list.'],
      ['outcome=constructor', 'outcome', 'Choose an outcome from the list.'],
      ['outcome=authenticated', 'outcome', 'Choose an outcome from the list.'],
      ['period=1y', 'period', 'Choose a period from the list.'],
      ['period=%00', 'period', 'Choose a period from the list.'],
    ];
    for (const [query, name, message] of bad) {
      const page = await session.get(`${path()}?${query}`);
      expect(page.status, query).toBe(400);
      expect(page.headers.get('content-type'), query).toContain('text/html');
      expect(noticeOf(page), query).toContain('A filter of the sign-in history was not understood');
      expect(page.text, query).toContain(
        `id="field-${name}" name="${name}" aria-describedby="field-${name}-error" aria-invalid="true"`,
      );
      expect(page.text, query).toContain(message);
      // The refused filter is left out: the history shows what the others select.
      expect(modelsOf(page).length, query).toBe(20);
    }
    // One refused filter beside a good one: the good one still applies.
    const mixed = await session.get(`${path()}?outcome=throttled&period=forever`);
    expect(mixed.status).toBe(400);
    expect(modelsOf(mixed)).toEqual(expected((e) => e.outcome === 'throttled').slice(0, 20));
    // A repeated parameter reads as no value (the console's rule for every form and query).
    const twice = await session.get(`${path()}?outcome=success&outcome=failure`);
    expect(twice.status).toBe(200);
  });

  it('exports the filtered history as CSV, streamed, with safe cells and no secret', async () => {
    const all = await session.get(`${path()}/history.csv`);
    expect(all.status).toBe(200);
    expect(all.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    expect(all.headers.get('content-disposition')).toBe(`attachment; filename="agent-${agent.id}-sign-ins.csv"`);
    expect(all.headers.get('cache-control')).toBe('no-store');
    expect(all.headers.get('x-content-type-options')).toBe('nosniff');
    const records = parseCsv(all.text);
    expect(records[0]).toEqual([
      'Time (UTC)',
      'Agent ID',
      'Website ID',
      'Website',
      'Outcome',
      'Outcome code',
      'Model',
      'IP address',
      'User agent',
      'User agent (raw)',
    ]);
    expect(records.slice(1).map((record) => record[6])).toEqual(expected(() => true));
    const first = records[1]!;
    expect(first).toEqual([
      new Date(recorded[0]!.at * 1000).toISOString(),
      agent.id,
      own.id,
      'My shop',
      'Signed in',
      'authenticated',
      'm-0',
      '192.0.2.1',
      'agentauth-python 0.1.0 (Python 3.11)',
      'agentauth-python/0.1.0 (Python 3.11)',
    ]);
    for (const secret of [agent.secret, own.secret, foreign.secret]) expect(all.text).not.toContain(secret);

    const failures = parseCsv((await session.get(`${path()}/history.csv?outcome=failure&website=${foreign.id}`)).text);
    expect(failures.slice(1).map((record) => record[6])).toEqual(
      expected((e) => e.outcome !== 'authenticated' && e.client === foreign.id),
    );
    // A refused filter: the page with its message, not a file.
    const refused = await session.get(`${path()}/history.csv?period=1y`);
    expect(refused.status).toBe(400);
    expect(refused.headers.get('content-type')).toContain('text/html');
    expect(refused.headers.get('content-disposition')).toBeNull();
    expect(refused.text).toContain('Choose a period from the list.');
  });

  it('keeps text that a spreadsheet would run as a formula from being one', async () => {
    const made = await createOwnedAgent(server.ctx, owner, 'Formula target');
    const hostile = [
      '=HYPERLINK("https://evil.example","x")',
      '+1+1',
      '-2+3',
      '@SUM(A1:A2)',
      '\tcmd',
      '\r=1',
      'plain, with "quotes"\nand a newline',
    ];
    for (const [i, text] of hostile.entries())
      await server.ctx.store.signIns.record({
        at: server.clock() - i,
        agent_id: made.agent.id,
        request_id: null,
        client_id: own.id,
        model: text,
        ip: '192.0.2.1',
        user_agent: text,
        outcome: 'authenticated',
      });
    const csv = await session.get(`/console/agents/${made.agent.id}/history.csv`);
    const records = parseCsv(csv.text).slice(1);
    expect(records.map((record) => record[6])).toEqual([
      `'=HYPERLINK("https://evil.example","x")`,
      `'+1+1`,
      `'-2+3`,
      `'@SUM(A1:A2)`,
      `'\tcmd`,
      `'\r=1`,
      'plain, with "quotes"\nand a newline',
    ]);
    expect(records.map((record) => record[9])).toEqual(records.map((record) => record[6]));
    // Every cell is quoted; the quotes inside are doubled.
    expect(csv.text).toContain(`"'=HYPERLINK(""https://evil.example"",""x"")"`);
  });

  it('is its owner’s and the admins’ only: another member gets 404 for the page and the CSV', async () => {
    expect((await stranger.get(path())).status).toBe(404);
    const csv = await stranger.get(`${path()}/history.csv`);
    expect(csv.status).toBe(404);
    expect(csv.headers.get('content-type')).toContain('text/html');
    expect(csv.text).not.toContain('m-0');
    // An admin reaches every agent, and its whole history.
    const asAdmin = parseCsv((await admin.get(`${path()}/history.csv`)).text);
    expect(asAdmin.slice(1).map((record) => record[6])).toEqual(expected(() => true));
    // Without a session: to the sign-in page.
    const anonymous = await fetch(`${server.baseUrl}${path()}/history.csv`, { redirect: 'manual' });
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get('location')).toContain('/console/sign-in');
  });
});

describe("a website's history", () => {
  it("lists the sign-ins to the website only, filters by agent, and exports them; not another owner's", async () => {
    const path = `/console/websites/${foreign.id}`;
    // The agent is another owner's: its sign-ins there are read as the website is told them (the
    // sub and the time; issue 35), and its failed attempts not at all; the admin reads them whole.
    const signedIn = recorded.filter((e) => e.client === foreign.id && e.outcome === 'authenticated');
    expect(await allPages(admin, path)).toEqual(expected((e) => e.client === foreign.id));
    expect(await allPages(stranger, path)).toEqual([]);
    const times = async (as: ConsoleSession, query: string) => {
      const found: string[] = [];
      let next: string | undefined = `${path}${query}`;
      for (let pages = 0; next && pages < 10; pages++) {
        const page = await as.get(next);
        expect(page.status, next).toBe(200);
        expect(page.text).not.toMatch(/m-\d+|192\.0\.2\.1|agentauth-python/);
        found.push(
          ...[
            ...page.text.matchAll(
              /<tr data-event="[^"]+">\s*<td data-label="Time" class="title"><time datetime="([^"]+)"/g,
            ),
          ].map((m) => m[1]!),
        );
        next = olderLink(page);
      }
      return found;
    };
    const signedInTimes = signedIn.map((e) => new Date(e.at * 1000).toISOString());
    expect(await times(stranger, '')).toEqual(signedInTimes);
    expect(await times(stranger, `?agent=${agent.id}&outcome=success`)).toEqual(signedInTimes);
    expect(await times(stranger, '?outcome=failure')).toEqual([]);
    const refused = await stranger.get(`${path}?agent=agt_unknown`);
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('Choose an agent from the list.');
    const csv = await stranger.get(`${path}/history.csv`);
    expect(csv.headers.get('content-disposition')).toBe(`attachment; filename="website-${foreign.id}-sign-ins.csv"`);
    const records = parseCsv(csv.text).slice(1);
    expect(records.map((record) => [record[0], record[1], record[5], record[6], record[7], record[8]])).toEqual(
      signedIn.map((e) => [new Date(e.at * 1000).toISOString(), agent.id, 'authenticated', '', '', '']),
    );
    // The agent's owner does not own this website: its history, CSV included, is not theirs.
    expect((await session.get(path)).status).toBe(404);
    expect((await session.get(`${path}/history.csv`)).status).toBe(404);
  });

  it('exports more rows than one page of the store holds, in order, without a repeat', async () => {
    const bulk = await createOwnedClient(server.ctx, owner, {
      name: 'Busy site',
      redirect_uris: 'https://busy.example/cb',
    });
    const at = server.clock() - 10;
    // 1,050 rows, many sharing a second, across the export's pages of 500.
    for (let i = 0; i < 1050; i++)
      await server.ctx.store.signIns.record({
        at: at - Math.floor(i / 7),
        agent_id: agent.id,
        request_id: null,
        client_id: bulk.client.id,
        model: `bulk-${i}`,
        ip: null,
        user_agent: null,
        outcome: 'authenticated',
      });
    const records = parseCsv((await session.get(`/console/websites/${bulk.client.id}/history.csv`)).text).slice(1);
    expect(records).toHaveLength(1050);
    expect(new Set(records.map((record) => record[6])).size).toBe(1050);
    const times = records.map((record) => record[0]!);
    expect([...times].sort().reverse()).toEqual(times);
  });
});

describe("the admin's activity", () => {
  it('lists agent sign-ins beside console actions, newest first, and filters by kind', async () => {
    server.clock.advance(10);
    await recordConsoleEvent(server.ctx, owner, 'test.activity_marker', null, '198.51.100.7', 'console-side');
    await server.ctx.store.signIns.record({
      at: server.clock(),
      agent_id: agent.id,
      request_id: null,
      client_id: own.id,
      model: 'activity-model',
      ip: '198.51.100.8',
      user_agent:
        'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
      outcome: 'request_mismatch',
    });
    const page = await admin.get('/console/admin/events');
    expect(page.status).toBe(200);
    const rows = page.text.split(/<tr class="/).slice(1);
    const signInRow = rows.find((row) => row.includes('activity-model'))!;
    expect(signInRow).toMatch(/^sign-in"/);
    expect(signInRow).toContain(`<code>${agent.id}</code>`);
    expect(signInRow).toContain('Agent sign-in: <span class="outcome failure">');
    expect(signInRow).toContain('Refused: unexpected site');
    expect(signInRow).toContain('My shop');
    expect(signInRow).toContain('198.51.100.8');
    expect(signInRow).toContain('<summary>Chrome 131 on Linux</summary>');
    expect(rows.some((row) => row.startsWith('console"') && row.includes('console-side'))).toBe(true);

    const signIns = await admin.get('/console/admin/events?show=sign-ins');
    expect(signIns.text).toContain('activity-model');
    expect(signIns.text).not.toContain('console-side');
    expect(signIns.text).toMatch(/<option value="sign-ins" selected>/);
    const consoleOnly = await admin.get('/console/admin/events?show=console');
    expect(consoleOnly.text).toContain('console-side');
    expect(consoleOnly.text).not.toContain('activity-model');

    const refused = await admin.get('/console/admin/events?show=everything-please');
    expect(refused.status).toBe(400);
    expect(noticeOf(refused)).toBe('Choose what to show from the list.');
    expect(refused.text).toContain('activity-model');
    // Members do not see it.
    expect((await stranger.get('/console/admin/events?show=sign-ins')).status).toBe(403);
  });

  it('pages through both kinds without losing or repeating a line, ties included', async () => {
    server.clock.advance(100);
    const at = server.clock();
    // 70 sign-ins and 70 console actions, sharing seconds, newer than everything before.
    for (let i = 0; i < 70; i++) {
      await server.ctx.store.signIns.record({
        at: at - Math.floor(i / 3),
        agent_id: agent.id,
        request_id: null,
        client_id: own.id,
        model: `page-s${i}`,
        ip: null,
        user_agent: null,
        outcome: 'authenticated',
      });
      await recordConsoleEvent(server.ctx, null, 'test.page', null, null, `page-c${i}`);
    }
    const seen: string[] = [];
    let next: string | undefined = '/console/admin/events';
    for (let pages = 0; next && pages < 20; pages++) {
      const page: Page = await admin.get(next);
      expect(page.status).toBe(200);
      seen.push(...[...page.text.matchAll(/[> ](page-[sc]\d+)</g)].map((match) => match[1]!));
      next = /href="(\/console\/admin\/events\?before=[^"]+)" rel="next"/
        .exec(page.text)?.[1]
        ?.replaceAll('&amp;', '&');
    }
    expect(seen).toHaveLength(140);
    expect(new Set(seen).size).toBe(140);
  });
});
