/**
 * @agentauth/agent as its users get it, by both routes its README gives: `npm install` of the
 * package's folder in a clone of the repository (npm links the folder and installs none of its
 * dependencies) and of its `npm pack` tarball, each into an empty project outside this
 * repository, offline. Then, with no build step and nothing but what the package carries:
 * plain `node` imports the SDK and signs in to a real server; `npx agentauth-agent --version`;
 * `agentauth-agent sign-in` signs in; `npx agentauth-agent mcp`, driven by the MCP SDK's own
 * stdio client, lists tools with an outputSchema and answers with structuredContent; and a
 * consumer's tsc type-checks the SDK without @types/node.
 */
import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { continueFlow, type Party, setupParty, startFlow } from '../../../test/helpers/flow.ts';
import { startTestServer, type TestServer } from '../../../test/helpers/server.ts';

const run = promisify(execFile);
const packageDir = fileURLToPath(new URL('../', import.meta.url));
const repositoryDir = fileURLToPath(new URL('../../../', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const HOST = 'notes.acme.example';

/** The environment of a child: without npm's and vitest's variables, so nothing leaks in from this run. */
function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(npm_|NODE_OPTIONS$|NODE_PATH$|VITEST|AGENTAUTH_)/i.test(name)) env[name] = value;
  }
  return { ...env, ...extra };
}

/** Every file under a directory, relative to it, sorted. */
function filesOf(directory: string): string[] {
  const walk = (folder: string): string[] =>
    readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(join(folder, entry.name)) : [relative(directory, join(folder, entry.name))],
    );
  return walk(directory).sort();
}

let server: TestServer;
let party: Party;
let work: string;
let packed: { filename: string; files: { path: string }[] };
/** The folder a clone of the repository has: packages/agent, with no node_modules anywhere above it. */
let cloned: string;
const projects = { folder: '', tarball: '' };
type Route = keyof typeof projects;

const agentEnv = () => ({
  AGENTAUTH_ISSUER: server.baseUrl,
  AGENTAUTH_AGENT_ID: party.agentId,
  AGENTAUTH_AGENT_SECRET: party.agentSecret,
  AGENTAUTH_MODEL: 'packaged-model',
});

async function emptyProject(name: string): Promise<string> {
  const project = join(work, name);
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  return project;
}

beforeAll(async () => {
  server = await startTestServer({ env: { AUTH_FAILURES_PER_IP: '1000' } });
  party = await setupParty(server, { name: 'Acme Notes', redirectUris: [`https://${HOST}/callback`] });
  work = mkdtempSync(join(tmpdir(), 'agentauth-agent-package-'));
  // The committed dist/ is packed as it is: no prepack, no build.
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], {
    cwd: packageDir,
    env: cleanEnv(),
  });
  packed = (JSON.parse(stdout) as (typeof packed)[])[0]!;
  // A copy of the folder rather than the folder itself: npm links a folder, and Node resolves
  // what a linked file imports from its real place, where this repository's node_modules would
  // answer for anything the package forgot to bundle. A clone has no node_modules.
  cloned = join(work, 'clone/packages/agent');
  cpSync(packageDir, cloned, { recursive: true, filter: (source) => !source.includes('node_modules') });
  projects.folder = await emptyProject('folder-consumer');
  projects.tarball = await emptyProject('tarball-consumer');
  const install = (project: string, spec: string) =>
    run('npm', ['install', '--offline', '--no-audit', '--no-fund', spec], { cwd: project, env: cleanEnv() });
  await Promise.all([install(projects.folder, cloned), install(projects.tarball, join(work, packed.filename))]);
}, 120_000);
afterAll(async () => {
  await server?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('@agentauth/agent as a package', () => {
  it('packs the committed dist, README, LICENSE and package.json only, and declares no dependencies', () => {
    expect(packed.filename).toBe('agentauth-agent-0.1.0.tgz');
    expect(packed.files.map((file) => file.path).sort()).toEqual(
      [
        'LICENSE',
        'README.md',
        'package.json',
        ...filesOf(join(packageDir, 'dist')).map((file) => `dist/${file}`),
      ].sort(),
    );
    for (const project of Object.values(projects)) {
      const manifest = JSON.parse(
        readFileSync(join(project, 'node_modules/@agentauth/agent/package.json'), 'utf8'),
      ) as Record<string, unknown>;
      expect(manifest).toMatchObject({
        name: '@agentauth/agent',
        type: 'module',
        exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } },
        bin: { 'agentauth-agent': 'dist/cli.js' },
      });
      for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies'])
        expect(manifest[field]).toBeUndefined();
      // Installed alone: nothing else came with it.
      expect(readdirSync(join(project, 'node_modules')).filter((name) => !name.startsWith('.'))).toEqual([
        '@agentauth',
      ]);
    }
  });

  it('installs from the folder as npm does it: a link to the folder itself, with nothing to resolve through above it', () => {
    const installed = join(projects.folder, 'node_modules/@agentauth/agent');
    expect(lstatSync(installed).isSymbolicLink()).toBe(true);
    expect(realpathSync(installed)).toBe(realpathSync(cloned));
    // Outside the repository, and no node_modules above the projects or the clone.
    expect(relative(repositoryDir, work).startsWith('..')).toBe(true);
    for (let folder = dirname(realpathSync(work)); folder !== dirname(folder); folder = dirname(folder))
      expect(existsSync(join(folder, 'node_modules')), folder).toBe(false);
  });

  describe.each(['folder', 'tarball'] as const)('installed from its %s', (route: Route) => {
    const project = () => projects[route];

    it('plain node imports the SDK and signs in to a real server, refusing the wrong site first, then waits for completion', async () => {
      const started = await startFlow(server, party);
      writeFileSync(
        join(project(), 'sign-in.mjs'),
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
        cwd: project(),
        env: cleanEnv(agentEnv()),
        timeout: 30_000,
      });
      // Play the browser: continue once the agent has authenticated.
      for (
        let i = 0;
        i < 200 && (await server.ctx.store.requests.find(started.requestId))?.status !== 'authenticated';
        i++
      )
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
      expect(await server.ctx.store.requests.find(started.requestId)).toMatchObject({
        status: 'completed',
        agent_id: party.agentId,
        model: 'packaged-model',
      });
    });

    it('runs `npx agentauth-agent --version` and `agentauth-agent sign-in`, which signs in without printing the secret', async () => {
      const version = await run('npx', ['--no-install', 'agentauth-agent', '--version'], {
        cwd: project(),
        env: cleanEnv(),
      });
      expect(version.stdout).toBe('0.1.0\n');

      const started = await startFlow(server, party);
      const bin = join(project(), 'node_modules/.bin/agentauth-agent');
      const signedIn = await run(bin, ['sign-in', started.requestId, '--expect-host', HOST, '--json'], {
        cwd: project(),
        env: cleanEnv(agentEnv()),
      });
      expect(JSON.parse(signedIn.stdout)).toMatchObject({
        status: 'authenticated',
        request_id: started.requestId,
        agent_id: party.agentId,
      });
      expect(await server.ctx.store.requests.find(started.requestId)).toMatchObject({
        status: 'authenticated',
        model: 'packaged-model',
      });
      // A usage error: exit 2, in the command's own name.
      const refused = await run(bin, ['sign-in', started.requestId], {
        cwd: project(),
        env: cleanEnv(agentEnv()),
      }).then(
        () => ({ code: 0, stderr: '' }),
        (error: { code: number; stderr: string }) => error,
      );
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/^agentauth-agent: usage_error: say which website you mean/);
      for (const output of [signedIn.stdout, signedIn.stderr, refused.stderr])
        expect(output).not.toContain(party.agentSecret);
    });

    it('serves MCP through `npx --no-install agentauth-agent mcp`: outputSchema on every tool, structuredContent in results', async () => {
      const transport = new StdioClientTransport({
        command: 'npx',
        args: ['--no-install', 'agentauth-agent', 'mcp'],
        cwd: project(),
        env: cleanEnv(agentEnv()),
        stderr: 'pipe',
      });
      let stderr = '';
      transport.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const client = new Client({ name: 'agentauth-package-test', version: '0.0.0' });
      await client.connect(transport);
      try {
        const { tools } = await client.listTools();
        expect(tools.map((tool) => tool.name).sort()).toEqual([
          'inspect_sign_in_request',
          'list_actions',
          'sign_in',
          'wait_for_action',
          'wait_for_sign_in',
        ]);
        for (const tool of tools) expect(tool.outputSchema?.type, tool.name).toBe('object');

        const started = await startFlow(server, party);
        // The client checks structuredContent against the outputSchema it listed.
        const call = async (name: string, args: Record<string, unknown>) => {
          const result = (await client.callTool({ name, arguments: args })) as {
            isError?: boolean;
            structuredContent?: Record<string, unknown>;
            content: Array<{ text: string }>;
          };
          expect(stderr + JSON.stringify(result)).not.toContain(party.agentSecret);
          return result;
        };
        const shown = await call('inspect_sign_in_request', { request_id: started.requestId });
        expect(shown.structuredContent).toMatchObject({
          request_id: started.requestId,
          client_name: 'Acme Notes',
          redirect_host: HOST,
          status: 'pending',
        });
        expect(JSON.parse(shown.content.at(-1)!.text)).toEqual(shown.structuredContent);
        const signedIn = await call('sign_in', { request_id: started.requestId, expected_host: HOST });
        expect(signedIn.structuredContent).toMatchObject({ status: 'authenticated', agent_id: party.agentId });
        // An error: isError with the documented body as text, and no structuredContent.
        const again = await call('sign_in', { request_id: started.requestId, expected_host: HOST });
        expect(again.isError).toBe(true);
        expect(again.structuredContent).toBeUndefined();
        expect(JSON.parse(again.content.at(-1)!.text)).toMatchObject({ error: 'request_already_used' });
        expect((await continueFlow(server, started)).status).toBe(302);
        const done = await call('wait_for_sign_in', { request_id: started.requestId, timeout_seconds: 20 });
        expect(done.structuredContent).toEqual({ request_id: started.requestId, status: 'completed' });
      } finally {
        await client.close();
      }
    });
  });

  it("type-checks in a consumer's strict TypeScript project without @types/node", async () => {
    const project = projects.tarball;
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
