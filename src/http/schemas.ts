/** Field schemas shared by the JSON and form endpoints. */
import { Type } from '@sinclair/typebox';

/**
 * Identifiers, secrets, codes and tokens. A control character (NUL among them, which
 * PostgreSQL cannot store) makes the request malformed: 400. Any other string is looked up
 * and, naming nothing, answers as docs/contract.md says for an unknown one (401, 404).
 */
export const Token = (maxLength: number) =>
  Type.String({ minLength: 1, maxLength, pattern: '^[^\\u0000-\\u001f\\u007f]+$' });
