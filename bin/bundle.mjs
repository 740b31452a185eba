// Bundles the TypeScript sources into dist/agentauth.mjs with esbuild (a tenth of a second), so
// that the server process carries no TypeScript loader (about 30 MB less). Dependencies stay
// external, loaded from node_modules as usual, except the agent SDK (@agentauth/agent, the
// workspace packages/agent): it is bundled from its TypeScript source, which the
// '@agentauth/source' export condition names, so it needs no build either.
//
// bin/agentauth calls it at every start in a checkout (src/ beside bin/); `npm run build` calls it
// once for an install that has no sources and is never written to (a container image, a package:
// `npm pack` runs it as prepack).
import { existsSync, mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BUNDLE = `${ROOT}dist/agentauth.mjs`;
/** What the bundle is made of, besides package.json: a file here newer than the bundle is not in it. */
const SOURCES = ['src', 'packages/agent/src'];
/** The errors of a dist/ this user may not write: a checkout installed by another user, a read-only mount. */
const NOT_WRITABLE = new Set(['EACCES', 'EPERM', 'EROFS']);

/** Writes dist/agentauth.mjs from src/ and answers its path. */
export async function bundle() {
  const { build, stop } = await import('esbuild');
  // The asynchronous build and stop(): buildSync would keep a worker thread (its own V8
  // heap: 9 MB of resident memory measured at idle) alive in the server process for good.
  const { outputFiles } = await build({
    entryPoints: [`${ROOT}src/cli/main.ts`],
    bundle: true,
    conditions: ['@agentauth/source'],
    plugins: [
      {
        name: 'dependencies-external',
        setup(plugins) {
          // What `packages: 'external'` does (every bare import is external), bar the SDK.
          plugins.onResolve({ filter: /^[^./]/ }, (args) =>
            /^@agentauth\/agent(\/|$)/.test(args.path) ? undefined : { path: args.path, external: true },
          );
        },
      },
    ],
    platform: 'node',
    format: 'esm',
    // package.json's engines: the oldest Node the server runs on.
    target: 'node22',
    keepNames: true,
    write: false,
    logLevel: 'error',
  });
  await stop();
  // Written under a temporary name and renamed: processes starting together never read a
  // half-written bundle.
  mkdirSync(`${ROOT}dist`, { recursive: true });
  const temporary = `${BUNDLE}.${process.pid}.tmp`;
  writeFileSync(temporary, outputFiles[0].contents);
  renameSync(temporary, BUNDLE);
  return BUNDLE;
}

/**
 * The bundle a checkout runs: made afresh, or, where this user cannot write dist/ (a checkout
 * installed by root and run by a service's user), the one `npm run build` left, with a warning
 * on stderr when a source is newer. Without one, it says what to run and exits 1.
 */
export async function checkoutBundle() {
  try {
    return await bundle();
  } catch (error) {
    if (!NOT_WRITABLE.has(error?.code)) throw error;
    const build = `run \`npm run build\` in ${ROOT} as a user who may write there`;
    if (!existsSync(BUNDLE)) {
      process.stderr.write(`agentauth: cannot write ${ROOT}dist/ (${error.code}) and no bundle is there: ${build}\n`);
      process.exit(1);
    }
    const built = statSync(BUNDLE).mtimeMs;
    const newer = sourceFiles().find((file) => statSync(`${ROOT}${file}`).mtimeMs > built);
    if (newer)
      process.stderr.write(
        `agentauth: cannot write ${ROOT}dist/ (${error.code}); running dist/agentauth.mjs, older than ${newer}: ${build}\n`,
      );
    return BUNDLE;
  }
}

/** package.json and every file under SOURCES, relative to ROOT. */
function sourceFiles() {
  return [
    'package.json',
    ...SOURCES.filter((folder) => existsSync(`${ROOT}${folder}`)).flatMap((folder) =>
      readdirSync(`${ROOT}${folder}`, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => `${entry.parentPath}/${entry.name}`.slice(ROOT.length)),
    ),
  ];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.log(`built ${await bundle()}`);
}
