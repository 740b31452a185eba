/**
 * npm run demo -- --website, as a newcomer runs it: a child process whose printout is followed
 * to the letter (the URL to open, then the agent's command), then Ctrl-C. The demo always uses
 * SQLite in a temporary directory, whatever the project's engine.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { CookieJar } from './helpers/cookie-jar.ts';
import { metaContent } from './helpers/flow.ts';

const run = promisify(execFile);
// Vite puts BASE_URL=/ into the test environment; neither the demo nor the agent's CLI may inherit it.
const env = {
  ...process.env,
  BASE_URL: undefined,
  DATABASE_URL: undefined,
  JWT_SECRET: undefined,
  NODE_ENV: undefined,
} as NodeJS.ProcessEnv;

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

it('prints the URL and the agent command; following them signs the person in; Ctrl-C removes everything', {
  timeout: 90_000,
}, async () => {
  const demo = spawn('node', ['--import', 'tsx', 'scripts/demo.ts', '--website'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  demo.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  demo.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => demo.once('exit', (code) => resolve(code)));
  let dir = '';
  try {
    await until(() => stdout.includes('Press Ctrl-C to stop.') || demo.exitCode !== null, 'the demo to start');
    expect(stderr).toBe('');
    const websiteUrl = /Open (\S+) in your browser/.exec(stdout)![1]!;
    const issuer = /agentauth {2}(\S+) {2}\(SQLite in (\S+)\)/.exec(stdout)!;
    dir = issuer[2]!;
    const agentCommand = /^ {3}(\(set -a; .*\))$/m.exec(stdout)![1]!;
    // The agent's secret stays in a private file; the terminal shows no secret.
    expect(statSync(join(dir, 'agent.env')).mode & 0o777).toBe(0o600);
    expect(stdout).not.toMatch(/aas_[A-Za-z0-9_-]{20}|cls_[A-Za-z0-9_-]{20}/);

    // 1. The website answers with the button.
    const home = await fetch(websiteUrl);
    expect(home.status).toBe(200);
    expect(await home.text()).toMatch(/<a class="agentauth-button" href="\/login">[\s\S]*Sign in with your AI agent/);

    // 2. The person presses it; the page shows a request; the printed command, as printed, signs the agent in.
    const browser = new CookieJar();
    const { response: page } = await browser.follow(new URL('/login', websiteUrl));
    const requestId = metaContent(await page.text(), 'request-id')!;
    expect(requestId).toMatch(/^req_/);
    const agent = run('sh', ['-c', agentCommand.replace('req_…', requestId)], { env });

    // 3. The page's script continues once the agent is in; here the test does what it does.
    const status = async () =>
      ((await (await fetch(`${issuer[1]}/api/check-status?request_id=${requestId}`)).json()) as { status: string })
        .status;
    await until(async () => (await status()) === 'authenticated', 'the agent to authenticate');
    const continued = await browser.fetch(new URL('/authorize/continue', issuer[1]), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ request_id: requestId }).toString(),
    });
    const { response: signedIn, url: landed } = await browser.follow(continued.headers.get('location')!);
    expect(landed.href).toBe(websiteUrl);
    expect(await signedIn.text()).toContain('Signed in as Ada Lovelace (ada@example.com)');
    expect((await agent).stdout).toMatch(
      /^Signed in as agt_\S+; the browser has continued .*completed\)\. Website \(name it gives itself, unverified\): "Example Website"/,
    );
  } finally {
    demo.kill('SIGINT');
  }
  expect(await exited).toBe(0);
  expect(stdout).toContain(`Stopped; ${dir} removed.`);
  expect(existsSync(dir)).toBe(false);
});
