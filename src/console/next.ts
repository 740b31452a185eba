/** Where the console sends a person after signing in or confirming who they are. */

/**
 * Where to go after sign-in: a console path only, never another site, in visible ASCII only (it
 * becomes a Location header, where CR, LF or NUL would split or break the answer).
 *
 * @example
 * safeNext('/console/agents?page=2'); // '/console/agents?page=2'
 * safeNext('//evil.example');         // '/console'
 */
export function safeNext(raw: string | undefined): string {
  return raw &&
    /^[\x21-\x7e]+$/.test(raw) &&
    /^\/console(\/[^/\\]*)*(\?[^\\]*)?$/.test(raw) &&
    !raw.startsWith('/console//')
    ? raw
    : '/console';
}
