/**
 * Builds dist/: one ES module bundled by esbuild (no dependencies, runs in Node 20+, Deno, Bun
 * and browsers) and the type declarations emitted by tsc. Run by `npm pack` (prepack) and by
 * the tests; esbuild and TypeScript come from the repository's node_modules.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, 'dist');
rmSync(dist, { recursive: true, force: true });

await build({
  entryPoints: [join(here, 'src/index.ts')],
  outfile: join(dist, 'index.js'),
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  legalComments: 'none',
  logLevel: 'warning',
});

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(here, 'tsconfig.json')], { stdio: 'inherit' });

// The sources import './x.ts'; the declarations must name './x.js', which every TypeScript
// version resolves to ./x.d.ts.
for (const file of readdirSync(dist).filter((name) => name.endsWith('.d.ts'))) {
  const path = join(dist, file);
  writeFileSync(path, readFileSync(path, 'utf8').replace(/(from\s+['"]\.{1,2}\/[^'"]+)\.ts(['"])/g, '$1.js$2'));
}

// server-codes.ts is generated (scripts/error-codes.ts) for errors.ts to check its table
// against at compile time; no public declaration names it, so it stays out of the package.
rmSync(join(dist, 'server-codes.d.ts'), { force: true });
