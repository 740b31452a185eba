/**
 * How a webhook's settings form names the events it subscribes to (docs/design.md §11, §15);
 * what is done with webhooks are the operations of src/management/webhooks.ts. The pages take
 * the catalogue and the limits from the domain.
 */
import { eventTypeList } from '../domain/webhooks/event-types.ts';

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
