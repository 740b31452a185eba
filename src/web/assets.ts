/** The page's static files, read once: ours from the project's root, a package's from where Node finds it. */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { PROJECT_ROOT } from '../paths.ts';

function asset(type: string, file: URL): { type: string; body: Buffer } {
  return { type, body: readFileSync(file) };
}

/** One of ours, in src/web/assets/ (an install carries that folder beside dist/). */
function ours(name: string): URL {
  return new URL(`src/web/assets/${name}`, PROJECT_ROOT);
}

/**
 * A file of a dependency, found as Node finds the package: in our node_modules, or in one above
 * where npm hoisted it (an install into a project, `npx`). The package's entry point, resolved,
 * locates its folder, since its exports name no other file.
 *
 * @example
 * fromPackage('@simplewebauthn/browser', '../dist/bundle/index.umd.min.js');
 * // file:///…/node_modules/@simplewebauthn/browser/dist/bundle/index.umd.min.js
 */
function fromPackage(name: string, relativeToEntry: string): URL {
  return new URL(relativeToEntry, pathToFileURL(createRequire(import.meta.url).resolve(name)));
}

/** By file name; a Map, so that names such as __proto__ name nothing. */
export const ASSETS: ReadonlyMap<string, { type: string; body: Buffer }> = new Map([
  ['authorize.js', asset('text/javascript; charset=utf-8', ours('authorize.js'))],
  ['agentauth.css', asset('text/css; charset=utf-8', ours('agentauth.css'))],
  ['console.js', asset('text/javascript; charset=utf-8', ours('console.js'))],
  // The browser half of @simplewebauthn, as the package builds it (a UMD global, no bundler). Its
  // entry for require is script/index.js, beside dist/.
  [
    'simplewebauthn-browser.js',
    asset('text/javascript; charset=utf-8', fromPackage('@simplewebauthn/browser', '../dist/bundle/index.umd.min.js')),
  ],
]);
