/** The page's static files, read once. Their directory is found from the project's root. */
import { readFileSync } from 'node:fs';
import { PROJECT_ROOT } from '../paths.ts';

function asset(name: string, type: string): { type: string; body: Buffer } {
  return { type, body: readFileSync(new URL(`src/pages/assets/${name}`, PROJECT_ROOT)) };
}

/** By file name; a Map, so that names such as __proto__ name nothing. */
export const ASSETS: ReadonlyMap<string, { type: string; body: Buffer }> = new Map([
  ['authorize.js', asset('authorize.js', 'text/javascript; charset=utf-8')],
  ['agentauth.css', asset('agentauth.css', 'text/css; charset=utf-8')],
]);
