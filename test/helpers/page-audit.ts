/**
 * The page audit's checks on the page a browser shows now (test/page-audit.test.ts): horizontal
 * overflow of the page and of every table, axe-core's serious and critical violations, and on a
 * phone WCAG 2.2 2.5.8's minimum target size. Each finding names the check and the element, so
 * that the list reads as a to-do list.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';

export interface Finding {
  check: 'page-overflow' | 'table-overflow' | 'axe' | 'target-size';
  /** The element (a CSS path) and what is wrong with it. */
  detail: string;
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Injects axe-core. The pages' CSP (script-src 'self') refuses an inline <script>, which is what
 * page.addScriptTag adds, and serving axe from the page's origin would mean a test-only route in
 * the server. DevTools' Runtime.evaluate runs as the debugger, outside the CSP: the page's own
 * policy stays in force for everything else.
 */
async function injectAxe(cdp: CDPSession): Promise<void> {
  const { exceptionDetails } = await cdp.send('Runtime.evaluate', { expression: AXE_SOURCE });
  if (exceptionDetails) throw new Error(`axe-core could not be injected: ${exceptionDetails.text}`);
}

/** The page's width, and every table's and its scroll container's, against the viewport. */
function overflow(page: Page): Promise<Finding[]> {
  return page.evaluate(() => {
    const findings: Array<{ check: 'page-overflow' | 'table-overflow'; detail: string }> = [];
    const path = (element: Element): string => {
      const parts: string[] = [];
      for (let at: Element | null = element; at && at !== document.body; at = at.parentElement) {
        if (at.id) {
          parts.unshift(`#${at.id}`);
          break;
        }
        const label = at.getAttribute('aria-label');
        parts.unshift(label ? `${at.localName}[aria-label="${label}"]` : at.localName);
      }
      return parts.join(' > ');
    };
    const root = document.scrollingElement ?? document.documentElement;
    const width = root.clientWidth;
    if (root.scrollWidth > width)
      findings.push({
        check: 'page-overflow',
        detail: `the page is ${root.scrollWidth} px wide in a ${width} px window`,
      });
    for (const table of Array.from(document.querySelectorAll('table'))) {
      const box = table.getBoundingClientRect();
      // A table for screen readers only (the chart's numbers) is 1 px and clipped on purpose.
      if (box.width <= 1 || box.height <= 1) continue;
      const caption = table.caption?.textContent ?? table.getAttribute('aria-label');
      const heading = table.closest('section')?.querySelector('h2, h3')?.textContent;
      const name = table.id
        ? `#${table.id}`
        : caption
          ? `table "${caption.trim()}"`
          : `${path(table)}${heading ? ` (under "${heading.trim()}")` : ''}`;
      if (box.left < -1 || box.right > width + 1)
        findings.push({
          check: 'table-overflow',
          detail: `${name}: spans ${Math.round(box.left)}–${Math.round(box.right)} px, outside the ${width} px window`,
        });
      // The nearest box that clips or scrolls sideways (the table itself, as display: block, or
      // an ancestor): it must be inside the window, and the table must fit in it unscrolled.
      for (let at: HTMLElement | null = table; at && at !== document.body; at = at.parentElement) {
        const style = getComputedStyle(at);
        if (style.overflowX === 'visible') continue;
        const outer = at.getBoundingClientRect();
        if (outer.left < -1 || outer.right > width + 1)
          findings.push({
            check: 'table-overflow',
            detail: `${at === table ? name : `${path(at)} (around ${name})`}: spans ${Math.round(outer.left)}–${Math.round(outer.right)} px, outside the ${width} px window`,
          });
        if (at.scrollWidth > at.clientWidth + 1)
          findings.push({
            check: 'table-overflow',
            detail: `${at === table ? name : `${path(at)} (around ${name})`}: ${at.scrollWidth} px of content in ${at.clientWidth} px (overflow-x: ${style.overflowX}; columns scroll or are cut off)`,
          });
        break;
      }
    }
    return findings;
  });
}

/** axe-core's violations of impact serious or critical, one finding per element. */
async function axe(page: Page, cdp: CDPSession): Promise<Finding[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await injectAxe(cdp);
  const violations = await page.evaluate(async () => {
    const result = await (
      window as unknown as {
        axe: {
          run(
            context: Document,
            options: object,
          ): Promise<{
            violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[] }> }>;
          }>;
        };
      }
    ).axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      targets: violation.nodes.map((node) => node.target.map(String).join(' ')),
    }));
  });
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .flatMap((violation) =>
      violation.targets.map((target) => ({
        check: 'axe' as const,
        detail: `${violation.id} (${violation.impact}) at ${target}: ${violation.help}`,
      })),
    );
}

/**
 * WCAG 2.2 2.5.8 Target Size (Minimum), on the phone: every visible a, button, input, select,
 * textarea, summary and [role=button] is at least 24 × 24 CSS px, except
 * - inline: a link inside a sentence (display inline, with other text in the same block), whose
 *   size the line height of the text sets;
 * - spacing: a smaller target whose 24 px circle, centred on it, meets no other target and no
 *   other small target's circle;
 * - equivalent: a checkbox or radio button whose label (clicking it does the same) makes the
 *   target 24 × 24 together with it.
 * Disabled controls are no targets.
 */
function targetSizes(page: Page): Promise<Finding[]> {
  return page.evaluate(() => {
    const MIN = 24;
    type Box = { left: number; top: number; right: number; bottom: number };
    const path = (element: Element): string => {
      const parts: string[] = [];
      for (let at: Element | null = element; at && at !== document.body; at = at.parentElement) {
        if (at.id) {
          parts.unshift(`#${at.id}`);
          break;
        }
        parts.unshift(at.localName);
      }
      return parts.join(' > ');
    };
    const visible = (element: Element) => {
      const style = getComputedStyle(element);
      const box = element.getBoundingClientRect();
      return style.visibility !== 'hidden' && style.display !== 'none' && box.width > 0 && box.height > 0;
    };
    const union = (a: Box, b: Box): Box => ({
      left: Math.min(a.left, b.left),
      top: Math.min(a.top, b.top),
      right: Math.max(a.right, b.right),
      bottom: Math.max(a.bottom, b.bottom),
    });
    /** An inline link whose block has words of its own besides its targets' (a sentence, not a row of links). */
    const inSentence = (element: HTMLElement) => {
      if (element.localName !== 'a' || getComputedStyle(element).display !== 'inline') return false;
      let block: HTMLElement | null = element.parentElement;
      while (block && getComputedStyle(block).display === 'inline') block = block.parentElement;
      if (!block) return false;
      const walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode())
        if (
          !node.parentElement?.closest('a, button, summary, [role="button"]') &&
          /[\p{L}\p{N}]/u.test(node.textContent ?? '')
        )
          return true;
      return false;
    };
    const targets = Array.from(
      document.querySelectorAll<HTMLElement>(
        'a[href], button, input:not([type="hidden"]), select, textarea, summary, [role="button"]',
      ),
    )
      .filter((element) => visible(element) && !(element as HTMLButtonElement).disabled)
      .map((element) => {
        let box: Box = element.getBoundingClientRect();
        if (element instanceof HTMLInputElement && /^(checkbox|radio)$/.test(element.type))
          for (const label of Array.from(element.labels ?? [])) box = union(box, label.getBoundingClientRect());
        const small = box.right - box.left < MIN - 0.5 || box.bottom - box.top < MIN - 0.5;
        return { element, box, small };
      });
    const centre = (box: Box) => ({ x: (box.left + box.right) / 2, y: (box.top + box.bottom) / 2 });
    /** Whether a circle of radius 12 at `c` meets the box. */
    const circleMeetsBox = (c: { x: number; y: number }, box: Box) => {
      const dx = Math.max(box.left - c.x, 0, c.x - box.right);
      const dy = Math.max(box.top - c.y, 0, c.y - box.bottom);
      return dx * dx + dy * dy < (MIN / 2) ** 2;
    };
    const findings: Array<{ check: 'target-size'; detail: string }> = [];
    for (const target of targets) {
      if (!target.small || inSentence(target.element)) continue;
      const c = centre(target.box);
      const crowded = targets.some((other) => {
        if (other === target || other.element.contains(target.element) || target.element.contains(other.element))
          return false;
        if (!other.small) return circleMeetsBox(c, other.box);
        const o = centre(other.box);
        return Math.hypot(c.x - o.x, c.y - o.y) < MIN;
      });
      if (!crowded) continue;
      const width = Math.round(target.box.right - target.box.left);
      const height = Math.round(target.box.bottom - target.box.top);
      const text = (target.element.textContent ?? '').trim().replace(/\s+/g, ' ').slice(0, 40);
      findings.push({
        check: 'target-size',
        detail: `${path(target.element)}${text ? ` "${text}"` : ''}: ${width} × ${height} px, closer than 24 px to another target`,
      });
    }
    return findings;
  });
}

export interface Auditor {
  /** Every finding on the page now; `phone` adds the target size check. */
  audit(page: Page, phone: boolean): Promise<Finding[]>;
}

/** An auditor for the pages of one context (one DevTools session per page, made once). */
export function auditor(context: BrowserContext): Auditor {
  const sessions = new Map<Page, CDPSession>();
  return {
    async audit(page, phone) {
      let cdp = sessions.get(page);
      if (!cdp) {
        cdp = await context.newCDPSession(page);
        sessions.set(page, cdp);
      }
      return [...(await overflow(page)), ...(await axe(page, cdp)), ...(phone ? await targetSizes(page) : [])];
    },
  };
}
