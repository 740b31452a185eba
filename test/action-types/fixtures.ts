/** Action types the suites of test/action-types/ register (docs/design.md §21). */
import type { ActionType } from '../../src/domain/authorization-details.ts';

/** A payment, with the amount a policy's "up to" compares: the one every suite registers. */
export { PAYMENT } from '../helpers/action-requests.ts';

/** A deletion, with an optional field. */
export const DELETION: ActionType = {
  type: 'urn:acme:delete',
  description: 'Delete {count} backups {note}',
  fields: { count: { type: 'integer', required: true }, note: { type: 'string' } },
};

/** Where a ping website is told; .example never resolves, so saving it asks no receiver. */
export const PING_ENDPOINT = 'https://shop.example/ciba/notify';
