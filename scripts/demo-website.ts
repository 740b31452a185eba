/**
 * npm run demo -- --website: the whole thing in a browser.
 *
 * Starts agentauth on a temporary SQLite database, registers a client for the example website
 * (examples/website) and a demo agent, starts the website, and prints the URL to open and the
 * command to run as "the agent" once the page shows its request. Runs until Ctrl-C, then removes
 * everything it created. The agent's secret goes into a private file (mode 0600) in the
 * temporary directory, never onto the terminal.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type RunningWebsite, startWebsite } from '../examples/website/server.ts';
import { loadConfig } from '../src/config.ts';
import { registerAgent } from '../src/domain/agents.ts';
import { registerClient } from '../src/domain/clients.ts';
import { type RunningServer, startServer } from '../src/server.ts';
import { freePort } from '../test/helpers/net.ts';

const AGENTAUTH_CLI = fileURLToPath(new URL('../bin/agentauth', import.meta.url));
const OWNER = { ownerEmail: 'ada@example.com', ownerName: 'Ada Lovelace' };

/** A word the shell passes through unchanged. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

function untilStopped(): Promise<string> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
}

export async function runWebsiteDemo(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'agentauth-demo-website-'));
  const out = (text = '') => process.stdout.write(`${text}\n`);
  let server: RunningServer | undefined;
  let website: RunningWebsite | undefined;
  try {
    const port = await freePort();
    const issuer = `http://127.0.0.1:${port}`;
    server = await startServer(
      loadConfig({
        PORT: String(port),
        HOST: '127.0.0.1',
        BASE_URL: issuer,
        DATABASE_URL: `sqlite:${join(dir, 'agentauth.db')}`,
        JWT_SECRET: randomBytes(48).toString('base64url'),
        LOG_LEVEL: 'silent',
      }),
      { warn: () => {} },
    );

    // The website's port is chosen first: its redirect URI is part of the client's registration.
    const websitePort = await freePort();
    const websiteOrigin = `http://127.0.0.1:${websitePort}`;
    const { client, secret: clientSecret } = await registerClient(server.ctx, {
      name: 'Example Website',
      redirectUris: [`${websiteOrigin}/callback`],
    });
    const { agent, secret: agentSecret } = await registerAgent(server.ctx, { ...OWNER, name: 'Demo agent' });
    const agentEnv = join(dir, 'agent.env');
    writeFileSync(
      agentEnv,
      `AGENTAUTH_ISSUER=${issuer}\nAGENTAUTH_AGENT_ID=${agent.id}\nAGENTAUTH_AGENT_SECRET=${agentSecret}\nAGENTAUTH_MODEL=demo-model\n`,
      { mode: 0o600 },
    );
    website = await startWebsite({
      issuer,
      clientId: client.id,
      clientSecret,
      port: websitePort,
      publicUrl: websiteOrigin,
    });

    const websiteHost = new URL(websiteOrigin).host;
    const agentCommand = `(set -a; . ${shellWord(agentEnv)}; ${shellWord(AGENTAUTH_CLI)} sign-in req_… --expect-host ${websiteHost} --wait)`;
    out('agentauth demo, in your browser');
    out();
    out(`  agentauth  ${issuer}  (SQLite in ${dir})`);
    out(`  website    ${website.url}  (examples/website, client ${client.id} "${client.name}")`);
    out(`  agent      ${agent.id}  "${agent.name}" of ${OWNER.ownerName} <${OWNER.ownerEmail}>`);
    out();
    out(`1. Open ${website.url} in your browser and press "Sign in with your AI agent".`);
    out('2. agentauth shows a request ID (req_…). Be the agent: in another terminal, run');
    out();
    out(`   ${agentCommand}`);
    out();
    out("   with req_… replaced by the request ID from the page. agent.env holds the demo agent's id");
    out('   and secret: it is not printed here, and it is deleted when the demo stops.');
    out(
      `3. The page continues by itself, and the website says "Signed in as ${OWNER.ownerName} (${OWNER.ownerEmail})".`,
    );
    out();
    out('Press Ctrl-C to stop.');

    const signal = await untilStopped();
    out(`\n${signal}: stopping.`);
    return 0;
  } finally {
    await website?.close();
    await server?.close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    out(`Stopped; ${dir} removed.`);
  }
}
