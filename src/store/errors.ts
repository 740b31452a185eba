/**
 * What the database drivers' errors mean, read from their codes and messages (better-sqlite3's
 * SQLITE_*, pg's SQLSTATE and Node's socket errors). A leaf module: the HTTP error handler
 * (src/http/errors.ts) asks it whether an error is an outage (503) or a value the database
 * refuses (400).
 */

/**
 * Error codes of the database drivers that mean "the database cannot be reached right now".
 * EMFILE and ENFILE (this process, or the system, is out of file descriptors: a connection to
 * PostgreSQL cannot be opened) pass as soon as sockets close, so they are transient too.
 */
const UNAVAILABLE =
  /^(SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL)|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|ENOENT|EACCES|EPIPE|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|EMFILE|ENFILE|57P0[1-3]|57014|08\d{3}|53300)/;

/**
 * Whether the error means the database cannot be reached right now (busy, locked, a refused or
 * dropped connection, a server shutting down, out of connections or file descriptors).
 *
 * @example
 * isDatabaseUnavailable({ code: 'SQLITE_BUSY' }); // true
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  const message = (error as { message?: unknown })?.message;
  return (
    (typeof code === 'string' && UNAVAILABLE.test(code)) ||
    (typeof message === 'string' &&
      /Connection terminated|database connection is not open|Cannot use a pool after calling end|not queryable|timeout exceeded when trying to connect/i.test(
        message,
      ))
  );
}

/**
 * PostgreSQL's SQLSTATE class 22 (data exception): for example a NUL byte in a text value.
 *
 * @example
 * isDataException({ code: '22021' }); // true: invalid byte sequence for encoding
 */
export function isDataException(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code);
}
