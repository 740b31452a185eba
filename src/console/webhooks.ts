/**
 * Webhooks as the console sees them (docs/design.md §11, §15): the rules are the domain's
 * (src/domain/webhooks/), shared with the API and the CLI; here is what the console's pages and
 * routes take of them, and how a settings form names the events it subscribes to.
 */
import { eventTypeList } from '../domain/webhooks/event-types.ts';

export {
  createWebhook,
  type DeliveryWithAttempts,
  deleteWebhook,
  listDeliveries,
  listWebhooks,
  MAX_WEBHOOK_DESCRIPTION_LENGTH,
  MAX_WEBHOOK_URL_LENGTH,
  reachableWebhook,
  redeliver,
  rotateWebhookSecret,
  updateWebhook,
  type WebhookChanges,
} from '../domain/webhooks/endpoints.ts';
export { eventTypeList } from '../domain/webhooks/event-types.ts';

/** The form's name of the checkbox of an event type (every console field is one string). */
export const eventField = (type: string) => `event.${type}`;
/** The checkbox that subscribes to every event, present and future. */
export const ALL_EVENTS_FIELD = 'all_events';

/**
 * The event types ticked in a settings form: ['*'] for "All events", else those of the catalogue.
 *
 * @example
 * eventsOfForm({ 'event.agent.created': 'on' }); // ['agent.created']
 */
export function eventsOfForm(form: Record<string, string | undefined>): string[] {
  if (form[ALL_EVENTS_FIELD] === 'on') return ['*'];
  return eventTypeList()
    .map(({ type }) => type)
    .filter((type) => form[eventField(type)] === 'on');
}
