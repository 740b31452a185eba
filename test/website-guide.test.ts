/**
 * docs/guides/website.md shows the examples' programs in full. Every code block under a line
 * naming a file of examples/ (`[`path`](link):`) must be that file, character for character, so
 * the guide never drifts from the programs the example suites run; every example program must be
 * shown; every relative link must lead to a file or folder.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const GUIDE = join(ROOT, 'docs', 'guides', 'website.md');
const text = readFileSync(GUIDE, 'utf8');

/** The programs a developer pastes: each must appear in the guide. */
const SHOWN = [
  'examples/plain-js/server.mjs',
  'examples/express/server.mjs',
  'examples/nextjs/auth.js',
  'examples/nextjs/app/api/auth/[...nextauth]/route.js',
  'examples/nextjs/app/page.js',
  'examples/python-authlib/app.py',
];

/** Each fenced block of the guide with the line before it (blank lines skipped). */
function blocksWithCaptions(markdown: string): Array<{ caption: string; body: string }> {
  const lines = markdown.split('\n');
  const blocks: Array<{ caption: string; body: string }> = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(\s*)(```+)/.exec(lines[i]!);
    if (!fence) continue;
    let end = i + 1;
    while (end < lines.length && lines[end]!.trim() !== fence[2]) end++;
    let before = i - 1;
    while (before >= 0 && lines[before]!.trim() === '') before--;
    blocks.push({ caption: lines[before] ?? '', body: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return blocks;
}

const CAPTION = /^\[`(examples\/[^`]+)`\]\(([^)\s]+)\):$/;

describe('docs/guides/website.md', () => {
  const shown = blocksWithCaptions(text).flatMap(({ caption, body }) => {
    const match = CAPTION.exec(caption);
    return match ? [{ file: match[1]!, link: match[2]!, body }] : [];
  });

  it('shows every example program, each under a link to its file', () => {
    expect(shown.map((block) => block.file)).toEqual(SHOWN);
    for (const { file, link } of shown) expect(relative(ROOT, join(dirname(GUIDE), decodeURI(link)))).toBe(file);
  });

  it.each(SHOWN)('shows %s exactly as the file is', (file) => {
    const block = shown.find((candidate) => candidate.file === file);
    expect(`${block?.body}\n`).toBe(readFileSync(join(ROOT, file), 'utf8'));
  });

  it('has relative links that lead to a file or folder of the repository', () => {
    const links = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!);
    const local = links.filter((link) => !/^[a-z]+:/.test(link) && !link.startsWith('#'));
    expect(local.length).toBeGreaterThan(5);
    const broken = local.filter((link) => !existsSync(join(dirname(GUIDE), decodeURI(link.split('#')[0]!))));
    expect(broken).toEqual([]);
  });

  it('has in-page links that name a heading of the guide', () => {
    const anchors = new Set(
      [...text.matchAll(/^#+ (.+)$/gm)].map((match) =>
        match[1]!
          .toLowerCase()
          .replace(/[^\w\- ]/g, '')
          .replace(/ /g, '-'),
      ),
    );
    const targets = [...text.matchAll(/\]\(#([^)]+)\)/g)].map((match) => match[1]!);
    expect(targets.filter((target) => !anchors.has(target))).toEqual([]);
  });
});
