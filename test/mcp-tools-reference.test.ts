/** docs/guides/mcp-hosts.md documents the MCP tools as `agentauth-agent mcp` lists them, and is kept so. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GUIDE_PATH, guideWith, listedTools } from '../scripts/mcp-tools-reference.ts';

describe('the MCP tools reference', () => {
  it('docs/guides/mcp-hosts.md has what `npm run docs:mcp` writes from the tools (run it after changing them)', async () => {
    const tools = await listedTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'inspect_sign_in_request',
      'list_actions',
      'sign_in',
      'wait_for_action',
      'wait_for_sign_in',
    ]);
    const guide = readFileSync(GUIDE_PATH, 'utf8');
    expect(guide).toBe(guideWith(tools, guide));
    // Every argument and output field is named in the guide.
    for (const tool of tools)
      for (const name of [
        ...Object.keys(tool.inputSchema.properties ?? {}),
        ...Object.keys(tool.outputSchema?.properties ?? {}),
      ])
        expect(guide, `${tool.name}.${name}`).toContain(`| \`${name}\` |`);
  });
});
