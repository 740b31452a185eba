/**
 * Every link in the documentation resolves: README.md, the other top-level Markdown files,
 * docs/ and the READMEs of packages, python/ and examples/. A relative link must name a file
 * or folder of the repository, and its #anchor a heading of that file (GitHub's slugs). Links
 * to other sites are not fetched (the tests run offline); they must at least be well-formed.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { documentationFiles } from './helpers/docs.ts';

const ROOT = resolve(import.meta.dirname, '..');

/** The text outside fenced code blocks, where a line starting with # is a heading. */
function outsideFences(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/** The text outside fenced code blocks and inline code, where a bracket is not a link. */
function prose(markdown: string): string {
  return outsideFences(markdown).replace(/`[^`\n]*`/g, '');
}

/** The targets of inline links and images, and of reference definitions. */
function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] ?? '');
  const definitions = [...text.matchAll(/^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)].map(
    (m) => m[1] ?? '',
  );
  return [...inline, ...definitions];
}

/** GitHub's anchor for each heading: lower case, punctuation dropped, spaces to hyphens, -1, -2 for repeats. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading = ''] of outsideFences(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = heading.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const repeats = seen.get(slug) ?? 0;
    seen.set(slug, repeats + 1);
    anchors.add(repeats === 0 ? slug : `${slug}-${repeats}`);
  }
  // Explicit anchors, such as <a id="…"></a>.
  for (const [, id = ''] of markdown.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id);
  return anchors;
}

/** What is wrong with one link of a file, or undefined when it resolves. */
function problem(file: string, target: string): string | undefined {
  if (/^(https?:|mailto:)/.test(target)) {
    return URL.canParse(target) ? undefined : 'is not a well-formed URL';
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return 'uses a scheme the documentation does not link to';
  const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
  const path = pathPart === '' ? file : resolve(dirname(file), decodeURIComponent(pathPart));
  if (!path.startsWith(ROOT)) return 'points outside the repository';
  if (!existsSync(path)) return `names ${relative(ROOT, path)}, which does not exist`;
  if (anchor === undefined || anchor === '') return undefined;
  if (statSync(path).isDirectory() || !path.endsWith('.md')) return undefined;
  if (/^L\d+(-L\d+)?$/.test(anchor)) return undefined;
  return headingAnchors(readFileSync(path, 'utf8')).has(anchor.toLowerCase())
    ? undefined
    : `names #${anchor}, which is not a heading of ${relative(ROOT, path)}`;
}

describe('the documentation', () => {
  const files = documentationFiles();

  it('has files to check (README.md and docs/)', () => {
    expect(files).toContain(join(ROOT, 'README.md'));
    expect(files.filter((file) => file.startsWith(join(ROOT, 'docs'))).length).toBeGreaterThan(5);
  });

  it('links only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const file of files) {
      for (const target of linkTargets(readFileSync(file, 'utf8'))) {
        const wrong = problem(file, target);
        if (wrong) broken.push(`${relative(ROOT, file)}: (${target}) ${wrong}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('runs the agent command with npx only as --no-install, as docs/guides/mcp-hosts.md explains why', () => {
    // Without it, npx under an MCP host installs whatever the registry holds under that name and
    // runs it with the agent's secret in its environment.
    const unguarded: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(
        /npx (?!--no-install )(?:-y |--yes )?agentauth-agent (?:mcp|sign-in|keygen)\b/g,
      ))
        unguarded.push(`${relative(ROOT, file)}: ${match[0]}`);
    }
    expect(unguarded).toEqual([]);
  });

  it('README.md is a front door of at most 250 lines; the rest lives in docs/', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(250);
  });

  it('finds a broken link and a broken anchor (the check itself works)', () => {
    const file = join(ROOT, 'README.md');
    expect(problem(file, 'docs/no-such-file.md')).toMatch(/does not exist/);
    expect(problem(file, '#no-such-heading')).toMatch(/not a heading/);
    expect(problem(file, 'LICENSE')).toBeUndefined();
    expect([...headingAnchors('# A `b` c\n## A `b` c\n### What may import what?\n')]).toEqual([
      'a-b-c',
      'a-b-c-1',
      'what-may-import-what',
    ]);
  });
});
