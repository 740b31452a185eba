/**
 * The agent SDK as its users get it: `npm pack` (which builds it), installed from the tarball
 * into an empty project outside this repository with `npm install --offline`, then imported by
 * plain `node` (no tsx, no vitest) and type-checked by a consumer's tsc without @types/node.
 * It signs in to a real server and waits for completion: proof that it needs none of the
 * server's dependencies.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { continueFlow, type Party, setupParty, startFlow } from '../../../test/helpers/flow.ts';
import { startTestServer, type TestServer } from '../../../test/helpers/server.ts';

const run = promisify(execFile);
const packageDir = fileURLToPath(new URL('../', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const HOST = 'notes.acme.example';

/** The environment of a child: without npm's and vitest's variables, so nothing leaks in from this run. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(npm_|NODE_OPTIONS$|NODE_PATH$|VITEST|AGENTAUTH_)/i.test(name)) env[name] = value;
  }
  return { ...env, ...extra };
}

let server: TestServer;
let party: Party;
let work: string;
let project: string;
let packed: { filename: string; files: { path: string }[]; version: string };

beforeAll(async () => {
  server = await startTestServer({ env: { AUTH_FAILURES_PER_IP: '1000' } });
  party = await setupParty(server, { name: 'Acme Notes', redirectUris: [`https://${HOST}/callback`] });
  work = mkdtempSync(join(tmpdir(), 'agentauth-sdk-package-'));
  // npm pack runs the prepack script, which builds dist/.
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], {
    cwd: packageDir,
    env: cleanEnv(),
  });
  packed = (JSON.parse(stdout) as (typeof packed)[])[0]!;
  project = join(work, 'consumer');
  await run('mkdir', [project]);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', join(work, packed.filename)], {
    cwd: project,
    env: cleanEnv(),
  });
}, 120_000);
afterAll(async () => {
  await server?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('@agentauth/agent as a package', () => {
  it('packs dist, README, LICENSE and package.json only, and declares no dependencies', () => {
    expect(packed.files.map((file) => file.path).sort()).toEqual(
      [
        'LICENSE',
        'README.md',
        'dist/client.d.ts',
        'dist/errors.d.ts',
        'dist/index.d.ts',
        'dist/index.js',
        'dist/page.d.ts',
        'dist/sse.d.ts',
        'package.json',
      ].sort(),
    );
    const manifest = JSON.parse(
      readFileSync(join(project, 'node_modules/@agentauth/agent/package.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(manifest).toMatchObject({
      name: '@agentauth/agent',
      type: 'module',
      exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } },
    });
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies'])
      expect(manifest[field]).toBeUndefined();
    // Installed alone: nothing else came with it.
    expect(readdirSync(join(project, 'node_modules')).filter((name) => !name.startsWith('.'))).toEqual(['@agentauth']);
    // The bundle imports nothing: no Node built-ins, no packages.
    const bundle = readFileSync(join(project, 'node_modules/@agentauth/agent/dist/index.js'), 'utf8');
    expect(bundle).not.toMatch(/^\s*import\s|\brequire\(|\bimport\(/m);
  });

  it('plain node imports it and signs in to a real server, refusing the wrong site first, then waits for completion', async () => {
    const started = await startFlow(server, party);
    writeFileSync(
      join(project, 'sign-in.mjs'),
      `import { AgentAuth, RequestMismatchError } from '@agentauth/agent';
const [requestId, host] = process.argv.slice(2);
const agent = new AgentAuth(); // AGENTAUTH_* from the environment
try {
  await agent.signIn({ requestId, expect: { host: 'evil.example' } });
  throw new Error('the wrong site was not refused');
} catch (error) {
  if (!(error instanceof RequestMismatchError)) throw error;
}
const signedIn = await agent.signIn({ requestId, expect: { host } });
console.log(JSON.stringify(signedIn));
const done = await agent.waitForCompletion(requestId, { timeoutMs: 20000 });
console.log(JSON.stringify(done));
`,
    );
    const child = run(process.execPath, ['sign-in.mjs', started.requestId, HOST], {
      cwd: project,
      env: cleanEnv({
        AGENTAUTH_ISSUER: server.baseUrl,
        AGENTAUTH_AGENT_ID: party.agentId,
        AGENTAUTH_AGENT_SECRET: party.agentSecret,
        AGENTAUTH_MODEL: 'packaged-model',
      }),
      timeout: 30_000,
    });
    // Play the browser: continue once the agent has authenticated.
    for (let i = 0; i < 200 && (await server.ctx.store.findRequest(started.requestId))?.status !== 'authenticated'; i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await continueFlow(server, started)).status).toBe(302);
    const { stdout } = await child;
    const [signedIn, done] = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(signedIn).toMatchObject({
      request_id: started.requestId,
      client_id: party.clientId,
      redirect_host: HOST,
      status: 'authenticated',
    });
    expect(done).toEqual({ status: 'completed' });
    expect(await server.ctx.store.findRequest(started.requestId)).toMatchObject({
      status: 'completed',
      agent_id: party.agentId,
      model: 'packaged-model',
    });
  });

  it("type-checks in a consumer's strict TypeScript project without @types/node", async () => {
    writeFileSync(
      join(project, 'consumer.ts'),
      `import { AgentAuth, AgentAuthError, RequestExpiredError, requestIdFrom, type RequestView, type SignInResult } from '@agentauth/agent';
const agent = new AgentAuth({ issuer: 'https://auth.example.com', agentId: 'agt_1', agentSecret: 'aas_1', model: 'm' });
export async function main(html: string): Promise<string> {
  const view: RequestView = await agent.inspect(requestIdFrom(html));
  const result: SignInResult = await agent.signIn({ html, expect: { host: view.redirect_host } });
  try {
    await agent.waitForCompletion(result.request_id, { timeoutMs: 1000, onStatus: (s) => void s.status });
  } catch (error) {
    if (error instanceof RequestExpiredError) return error.code;
    if (error instanceof AgentAuthError) return String(error.retryAfter ?? error.status);
  }
  return result.message;
}
`,
    );
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          lib: ['es2022', 'dom'],
          types: [],
          noEmit: true,
        },
        files: ['consumer.ts'],
      }),
    );
    await run(process.execPath, [tsc, '-p', project], { cwd: project, env: cleanEnv() });
  });
});
