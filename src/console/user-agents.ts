/**
 * A User-Agent header as people read it in a history: "Chrome 131 on Linux",
 * "agentauth-python 0.1.0 (Python 3.11)". The raw header stays available beside it (the pages
 * show it on demand): this names the families that sign in to the console and that agents use,
 * and falls back to the first product token for anything else. A full parser (a database of
 * thousands of devices) would add a dependency for a label, not for a decision.
 */

/** Browsers, most specific first: Edge, Opera and Samsung Internet also say Chrome, Chrome also says Safari. */
const BROWSERS: ReadonlyArray<[RegExp, string]> = [
  [/\bEdg(?:e|A|iOS)?\/(\d+)/, 'Edge'],
  [/\bOPR\/(\d+)/, 'Opera'],
  [/\bSamsungBrowser\/(\d+)/, 'Samsung Internet'],
  [/\bFirefox\/(\d+)/, 'Firefox'],
  [/\bFxiOS\/(\d+)/, 'Firefox'],
  [/\bHeadlessChrome\/(\d+)/, 'Headless Chrome'],
  [/\bCriOS\/(\d+)/, 'Chrome'],
  [/\bChrome\/(\d+)/, 'Chrome'],
  [/\bVersion\/(\d+(?:\.\d+)?).*\bSafari\//, 'Safari'],
];

const SYSTEMS: ReadonlyArray<[RegExp, string]> = [
  [/\b(?:iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b|\bX11\b/, 'Linux'],
];

/** Longest label shown; the rest is in the raw header. */
const MAX_LABEL = 60;

/**
 * @example
 * describeUserAgent('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36')
 * // 'Chrome 131 on Linux'
 * describeUserAgent('agentauth-python/0.1.0 (Python 3.11)') // 'agentauth-python 0.1.0 (Python 3.11)'
 * describeUserAgent(null) // 'unknown'
 */
export function describeUserAgent(raw: string | null | undefined): string {
  const header = raw?.trim() ?? '';
  if (header === '') return 'unknown';
  if (header.startsWith('Mozilla/')) {
    const system = SYSTEMS.find(([pattern]) => pattern.test(header))?.[1];
    for (const [pattern, name] of BROWSERS) {
      const match = pattern.exec(header);
      if (match) return `${name} ${match[1]}${system ? ` on ${system}` : ''}`;
    }
    return system ? `A browser on ${system}` : 'A browser';
  }
  // A program: its first product token, "name/version (comment)", as "name version (comment)".
  const product = /^([\w.-]+)(?:\/([\w.+-]+))?(?:\s+\(([^()]*)\))?/.exec(header);
  if (!product) return shorten(header);
  const [, name, version, comment] = product;
  return shorten(`${name}${version ? ` ${version}` : ''}${comment ? ` (${comment})` : ''}`);
}

const shorten = (text: string) => (text.length > MAX_LABEL ? `${text.slice(0, MAX_LABEL - 1)}…` : text);
