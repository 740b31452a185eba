/**
 * Builds dist/, which is committed: `npm install <repository>/packages/agent` links the folder and
 * installs none of its dependencies, so the package has none and ships ready to run.
 *
 * - index.js: the SDK, one ES module bundled by esbuild, importing nothing (Node 20+, Deno, Bun
 *   and browsers), with its type declarations emitted by tsc.
 * - cli.js: the `agentauth-agent` command (Node), with commander, the MCP SDK and zod bundled in;
 *   the MCP server and what it alone needs are split into chunks/, loaded only by `mcp`, so
 *   `sign-in` and `--version` start without them.
 * - THIRD-PARTY-NOTICES: the licence of every package bundled into cli.js and its chunks.
 *
 * Run with `npm run build -w @agentauth/agent` (or `npm run build:agent` at the root) after
 * changing packages/agent/src; test/agent-package-dist.test.ts fails while dist/ is stale.
 * `node build.mjs OUTDIR` builds elsewhere (the test compares such a build with dist/).
 * esbuild and TypeScript come from the repository's node_modules.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const dist = resolve(process.argv[2] ?? join(here, 'dist'));
rmSync(dist, { recursive: true, force: true });

// Paths in the bundles' comments are relative to the working directory: fixed to this folder,
// the output is the same bytes wherever the build runs from.
const common = { absWorkingDir: here, bundle: true, format: 'esm', legalComments: 'none', logLevel: 'warning' };

await build({
  ...common,
  entryPoints: [join(here, 'src/index.ts')],
  outfile: join(dist, 'index.js'),
  platform: 'neutral',
  target: 'es2022',
});

const cli = await build({
  ...common,
  entryPoints: { cli: join(here, 'src/cli/bin.ts') },
  outdir: dist,
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  platform: 'node',
  target: 'node20',
  // Bundled CommonJS (commander; ajv under the MCP SDK) calls require() for Node's built-ins, and
  // an ES module has no require of its own: each output file makes one from import.meta.url.
  banner: {
    js: "import { createRequire as __agentauthCreateRequire } from 'node:module';\nconst require = __agentauthCreateRequire(import.meta.url);",
  },
  metafile: true,
});
chmodSync(join(dist, 'cli.js'), 0o755);

// The declarations of the SDK (tsconfig.json leaves src/cli out: the command has no public types).
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const declarations = mkdtempSync(join(tmpdir(), 'agentauth-agent-types-'));
try {
  execFileSync(process.execPath, [tsc, '-p', join(here, 'tsconfig.json'), '--outDir', declarations], {
    stdio: 'inherit',
  });
  // The sources import './x.ts'; the declarations must name './x.js', which every TypeScript
  // version resolves to ./x.d.ts. server-codes.ts is generated (scripts/error-codes.ts) for
  // errors.ts to check its table against at compile time; no public declaration names it.
  for (const file of readdirSync(declarations).filter((name) => name.endsWith('.d.ts') && name !== 'server-codes.d.ts'))
    writeFileSync(
      join(dist, file),
      readFileSync(join(declarations, file), 'utf8').replace(/(from\s+['"]\.{1,2}\/[^'"]+)\.ts(['"])/g, '$1.js$2'),
    );
} finally {
  rmSync(declarations, { recursive: true, force: true });
}

writeFileSync(join(dist, 'THIRD-PARTY-NOTICES'), notices(Object.keys(cli.metafile.inputs)));

/**
 * The notices of the packages whose files esbuild put into the command's bundle: for each (by
 * name), its name, version, licence and the text of its LICENSE file. A package without one
 * fails the build, so nothing is shipped without its terms.
 */
function notices(inputs) {
  const packages = new Map();
  for (const input of inputs) {
    const match = /^(.*node_modules\/)((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match) packages.set(match[2], join(here, match[1], match[2]));
  }
  const sections = [...packages.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, directory]) => {
      const manifest = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8'));
      const licenceFile = readdirSync(directory)
        .filter((file) => /^licen[cs]e(\.(md|txt))?$/i.test(file))
        .sort()[0];
      if (!licenceFile || !existsSync(join(directory, licenceFile)))
        throw new Error(`${name} (${relative(here, directory)}) has no LICENSE file to carry into dist/`);
      const text = readFileSync(join(directory, licenceFile), 'utf8').replace(/\r\n/g, '\n').trim();
      return `## ${name} ${manifest.version} (${manifest.license})\n\n${text}\n`;
    });
  return (
    'The agentauth-agent command (dist/cli.js and dist/chunks/) bundles these packages; their licences follow.\n' +
    'The SDK (dist/index.js) bundles none.\n\n' +
    sections.join('\n')
  );
}
