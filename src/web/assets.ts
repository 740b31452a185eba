/** The page's static files, read once. Their directory is found from the project's root. */
import { readFileSync } from 'node:fs';
import { PROJECT_ROOT } from '../paths.ts';

function asset(name: string, type: string, path = `src/web/assets/${name}`): { type: string; body: Buffer } {
  return { type, body: readFileSync(new URL(path, PROJECT_ROOT)) };
}

/** By file name; a Map, so that names such as __proto__ name nothing. */
export const ASSETS: ReadonlyMap<string, { type: string; body: Buffer }> = new Map([
  ['authorize.js', asset('authorize.js', 'text/javascript; charset=utf-8')],
  ['agentauth.css', asset('agentauth.css', 'text/css; charset=utf-8')],
  ['console.js', asset('console.js', 'text/javascript; charset=utf-8')],
  // The browser half of @simplewebauthn, as the package builds it (a UMD global, no bundler).
  [
    'simplewebauthn-browser.js',
    asset(
      'simplewebauthn-browser.js',
      'text/javascript; charset=utf-8',
      'node_modules/@simplewebauthn/browser/dist/bundle/index.umd.min.js',
    ),
  ],
]);
