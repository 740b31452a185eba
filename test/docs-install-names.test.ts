/**
 * No guide installs one of our names from a public registry. agentauth, its agent package and
 * its Python SDK are not published: on npm and PyPI those names belong to whoever took them, so
 * `pip install agentauth`, `npm install @agentauth/agent` or `npx agentauth-agent` in a guide
 * would run a stranger's code (issue 38: the agent guide said `pip install 'agentauth[keys]'`).
 * Our packages install from a checkout or a packed tarball (a path), and `npx --no-install` runs
 * one already installed.
 */
import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { documentationFiles } from './helpers/docs.ts';

const ROOT = resolve(import.meta.dirname, '..');
/** Our names, unpublished: the server, the agent package and its command, the Python SDK. */
const OURS = /^(?:agentauth|@agentauth\/[\w.-]+|agentauth-agent)(?:$|[[@=<>~])/;

/** Each install command's package arguments, with `npx`'s command and whether it may fetch. */
function installs(line: string): { command: string; name: string }[] {
  const found: { command: string; name: string }[] = [];
  for (const match of line.matchAll(
    /\b(pip3?|pipx|uv pip|npm|pnpm|yarn|bun|npx|bunx|pnpx)\s+((?:install|i|add)\s+)?([^#;&|`\n]*)/g,
  )) {
    const [, tool = '', verb, rest = ''] = match;
    const runner = ['npx', 'bunx', 'pnpx'].includes(tool);
    if (!runner && !verb) continue;
    const words = rest.trim().split(/\s+/).filter(Boolean);
    // A runner that may not fetch runs what is installed; its first word is a command, not a package.
    if (runner && words.includes('--no-install')) continue;
    const names = words.filter((word) => !word.startsWith('-')).map((word) => word.replace(/^['"]|['"]$/g, ''));
    for (const name of runner ? names.slice(0, 1) : names) found.push({ command: match[0].trim(), name });
  }
  return found;
}

describe('install commands in the documentation', () => {
  it('never install agentauth, @agentauth/* or agentauth-agent by name from a registry', () => {
    // The changelog records what the guides once said; it instructs nobody.
    const guides = documentationFiles().filter((file) => relative(ROOT, file) !== 'CHANGELOG.md');
    const offending = guides.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, index) =>
          installs(line)
            .filter(({ name }) => OURS.test(name))
            .map(({ command }) => `${relative(ROOT, file)}:${index + 1}: ${command}`),
        ),
    );
    expect(offending).toEqual([]);
  });

  it('recognise the commands that would fetch our names, and leave paths and --no-install alone', () => {
    const names = (line: string) => installs(line).map(({ name }) => name);
    expect(names("pip install 'agentauth[keys]'")).toEqual(['agentauth[keys]']);
    expect(names('npm install -g @agentauth/agent')).toEqual(['@agentauth/agent']);
    expect(names('npx agentauth-agent sign-in req_1')).toEqual(['agentauth-agent']);
    expect(names('npx -y agentauth serve')).toEqual(['agentauth']);
    expect(names("pip install './python[keys]'")).toEqual(['./python[keys]']);
    expect(names('npm install -g ./agentauth-0.1.0.tgz')).toEqual(['./agentauth-0.1.0.tgz']);
    expect(names('npx --no-install agentauth-agent mcp')).toEqual([]);
    expect(names('npm ci --omit=dev')).toEqual([]);
    for (const line of ["pip install 'agentauth[keys]'", 'npx agentauth-agent mcp', 'npm i @agentauth/agent'])
      expect(
        names(line).some((name) => OURS.test(name)),
        line,
      ).toBe(true);
    for (const line of ["pip install './python[keys]'", 'npm install ./packages/agent', 'pip install flask authlib'])
      expect(
        names(line).some((name) => OURS.test(name)),
        line,
      ).toBe(false);
  });
});
