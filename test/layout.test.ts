/**
 * The layout of src/ and packages/agent/src/ is the one docs/layout.md draws: every file lies in an area of its table,
 * and imports only what its row says it may. A new folder, or an import that climbs (a
 * foundation reaching up into a feature, one feature into another), fails here until the map
 * says so.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');

interface Area {
  /** A folder (`src/console/`) or a file (`src/app.ts`), relative to the repository. */
  path: string;
  mayImport: string[];
}

/** The rows of the table under "## What may import what": `area` | what lives there | may import. */
function readMap(markdown: string): Area[] {
  const section = markdown.split(/^## What may import what$/m)[1]?.split(/^## /m)[0] ?? '';
  const rows = section.split('\n').filter((line) => /^\|\s*`/.test(line));
  return rows.map((row) => {
    const cells = row.split('|').map((cell) => cell.trim());
    const paths = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
    return { path: paths(cells[1]!)[0]!, mayImport: paths(cells[3]!) };
  });
}

function sourceFiles(directory: string): string[] {
  return readdirSync(join(ROOT, directory), { withFileTypes: true }).flatMap((entry) => {
    const path = `${directory}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|js|mjs)$/.test(entry.name) ? [path] : [];
  });
}

/** The area a file lies in: the longest path of the map that is the file or holds it. */
function areaOf(map: Area[], file: string): Area | undefined {
  const matches = map.filter((area) => (area.path.endsWith('/') ? file.startsWith(area.path) : file === area.path));
  return matches.sort((a, b) => b.path.length - a.path.length)[0];
}

/** What a file imports by path (relative specifiers), and the packages of this repository it names. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const specifiers = [...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s*'([^']+)'|import\('([^']+)'\)/g)].map(
    (match) => (match[1] ?? match[2])!,
  );
  return specifiers.flatMap((specifier) => {
    if (specifier.startsWith('.')) return [normalize(join(dirname(file), specifier))];
    if (specifier.startsWith('@agentauth/')) return [specifier];
    return [];
  });
}

const map = readMap(readFileSync(join(ROOT, 'docs/layout.md'), 'utf8'));
const files = [...sourceFiles('src'), ...sourceFiles('packages/agent/src')];

describe('the layout of src/ and packages/agent/src/ (docs/layout.md, "What may import what")', () => {
  it('reads a map that names every area once', () => {
    expect(map.length).toBeGreaterThan(8);
    expect(new Set(map.map((area) => area.path)).size).toBe(map.length);
  });

  it('places every source file in an area of the map', () => {
    expect(files.filter((file) => !areaOf(map, file))).toEqual([]);
  });

  it('has every import go where its area may import', () => {
    const climbing: string[] = [];
    for (const file of files) {
      const from = areaOf(map, file)!;
      for (const target of importsOf(file)) {
        const to = target.startsWith('@agentauth/') ? target : areaOf(map, relative(ROOT, join(ROOT, target)));
        const toPath = typeof to === 'string' ? to : to?.path;
        if (toPath === from.path) continue;
        if (toPath === undefined) climbing.push(`${file} imports ${target}, which no area of the map holds`);
        else if (!from.mayImport.includes(toPath)) climbing.push(`${file} imports ${target} (${toPath})`);
      }
    }
    expect(climbing).toEqual([]);
  });
});
