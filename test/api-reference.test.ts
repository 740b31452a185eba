/** docs/reference/api.md is made from the management API's OpenAPI document, and kept so. */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { apiDocument, apiReference, REFERENCE_PATH } from '../scripts/api-reference.ts';

// biome-ignore lint/suspicious/noExplicitAny: the document is read as the JSON it is
let doc: any;
let text: string;
beforeAll(async () => {
  doc = await apiDocument();
  text = apiReference(doc);
});

describe('the management API reference', () => {
  it('docs/reference/api.md is what `npm run docs:api` writes from the OpenAPI document (run it after changing a route)', () => {
    expect(readFileSync(REFERENCE_PATH, 'utf8')).toBe(text);
  });

  it('has a section for every operation, with its method and path, and its links lead somewhere', () => {
    const operations = Object.entries(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap(
      ([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, id: op.operationId })),
    );
    expect(operations.length).toBeGreaterThan(20);
    for (const { path, method, id } of operations) {
      expect(text, id).toContain(`\n### ${id}\n`);
      expect(text, id).toContain(`\`${method.toUpperCase()} ${path}\``);
    }
    for (const name of Object.keys(doc.components.schemas)) expect(text, name).toContain(`\n### ${name}\n`);
    for (const [, target] of text.matchAll(/\]\(([^)#]+)(#[^)]*)?\)/g)) {
      expect(existsSync(join(dirname(REFERENCE_PATH), target!)), target).toBe(true);
    }
    const anchors = new Set(
      [...text.matchAll(/^#{2,3} (.+)$/gm)].map(([, heading]) =>
        heading!
          .toLowerCase()
          .replace(/[^\w\s-]/g, '')
          .replace(/\s/g, '-'),
      ),
    );
    for (const [, anchor] of text.matchAll(/\]\(#([^)]+)\)/g)) expect(anchors, anchor).toContain(anchor);
  });
});
