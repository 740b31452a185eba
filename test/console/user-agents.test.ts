/** User-Agent headers as the console's histories name them (src/console/user-agents.ts). */
import { describe, expect, it } from 'vitest';
import { csvCell, csvLine } from '../../src/console/csv.ts';
import { describeUserAgent } from '../../src/console/user-agents.ts';

describe('describeUserAgent', () => {
  it.each([
    [
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
      'Chrome 131 on Linux',
    ],
    [
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.70',
      'Edge 131 on Windows',
    ],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0', 'Firefox 133 on Windows'],
    [
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
      'Safari 18.1 on macOS',
    ],
    [
      'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
      'Safari 18.1 on iOS',
    ],
    [
      'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1',
      'Chrome 131 on iOS',
    ],
    [
      'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
      'Chrome 131 on Android',
    ],
    [
      'Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/27.0 Chrome/125.0.0.0 Mobile Safari/537.36',
      'Samsung Internet 27 on Android',
    ],
    [
      'Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
      'Chrome 131 on ChromeOS',
    ],
    [
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36',
      'Headless Chrome 131 on Linux',
    ],
    ['agentauth-python/0.1.0 (Python 3.11)', 'agentauth-python 0.1.0 (Python 3.11)'],
    ['agentauth-agent-js/0.3.0', 'agentauth-agent-js 0.3.0'],
    ['curl/8.5.0', 'curl 8.5.0'],
    ['node', 'node'],
    ['Mozilla/5.0 (compatible; something)', 'A browser'],
    [`crawler/1.0 (${'x'.repeat(200)})`, `crawler 1.0 (${'x'.repeat(46)}…`],
    ['', 'unknown'],
    [null, 'unknown'],
  ])('%s → %s', (header, label) => {
    expect(describeUserAgent(header)).toBe(label);
  });
});

describe('CSV cells', () => {
  it('quotes every cell, doubles quotes, and defuses what a spreadsheet would run', () => {
    expect(csvCell('plain')).toBe('"plain"');
    expect(csvCell('say "hi", then\r\ngo')).toBe('"say ""hi"", then\r\ngo"');
    for (const start of ['=', '+', '-', '@', '\t', '\r', '\0']) expect(csvCell(`${start}1`)).toBe(`"'${start}1"`);
    expect(csvCell(null)).toBe('""');
    expect(csvCell(-5)).toBe(`"'-5"`);
    expect(csvLine(['a', null, 3])).toBe('"a","","3"\r\n');
  });
});
