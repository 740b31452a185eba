/**
 * A server-sent events reader over a fetch body (the WHATWG "event stream" format), so that no
 * EventSource is needed: fetch streams in every runtime, EventSource is not in Node.
 */
import { UnexpectedResponseError } from './errors.ts';

/** One dispatched event: its type (`message` when the stream named none) and its data. */
export interface ServerSentEvent {
  event: string;
  data: string;
}

/**
 * The longest line, and the most data one event may carry, in characters. The server's events
 * are under 300 characters (a status and its description); a line or an event past this is not
 * agentauth's, and reading on would let a server fill the agent's memory (design §12).
 */
export const MAX_LINE_LENGTH = 64 * 1024;
export const MAX_EVENT_DATA_LENGTH = 64 * 1024;

/** A line end: CR, LF, or (read as one) CRLF. */
const LINE_END = /[\r\n]/g;

/**
 * Yields the events of a `text/event-stream` body as they arrive. `onActivity` is called for
 * every chunk received, comments (keep-alives) included. Lines may end in CRLF, LF or CR and
 * may be split anywhere between chunks. Each chunk is scanned once, from where the previous one
 * stopped, so the work is linear in what arrives. A line or an event's data longer than 64 Ki
 * characters throws {@link UnexpectedResponseError}; an aborted `signal` throws its reason.
 */
export async function* readEvents(
  body: ReadableStream<Uint8Array>,
  onActivity: () => void = () => {},
  signal?: AbortSignal,
): AsyncGenerator<ServerSentEvent> {
  const reader = body.getReader();
  // Ends a pending read at once, whatever the fetch implementation does with its own signal.
  const onAbort = () => void reader.cancel(signal?.reason).catch(() => {});
  signal?.addEventListener('abort', onAbort, { once: true });
  const decoder = new TextDecoder();
  let partial = ''; // the start of a line whose end has not arrived yet
  let first = true;
  let afterCR = false;
  let event = '';
  let data: string[] = [];
  let dataLength = 0;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (signal?.aborted) throw signal.reason;
      if (done) return;
      onActivity();
      let text = decoder.decode(value, { stream: true });
      if (first && text.length > 0) {
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
        first = false;
      }
      let start = 0;
      // A CR ends a line at once; an LF right after it (maybe in this chunk) is its pair.
      if (afterCR && text.length > 0) {
        if (text.charCodeAt(0) === 0x0a) start = 1;
        afterCR = false;
      }
      for (;;) {
        LINE_END.lastIndex = start;
        const end = LINE_END.exec(text)?.index ?? -1;
        if (end < 0) {
          if (partial.length + text.length - start > MAX_LINE_LENGTH) throw tooLong('line', MAX_LINE_LENGTH);
          partial += text.slice(start);
          break;
        }
        const line = partial + text.slice(start, end);
        partial = '';
        if (line.length > MAX_LINE_LENGTH) throw tooLong('line', MAX_LINE_LENGTH);
        if (text.charCodeAt(end) === 0x0d) {
          if (end + 1 < text.length) start = text.charCodeAt(end + 1) === 0x0a ? end + 2 : end + 1;
          else [start, afterCR] = [end + 1, true];
        } else {
          start = end + 1;
        }
        if (line === '') {
          if (data.length > 0) yield { event: event || 'message', data: data.join('\n') };
          event = '';
          data = [];
          dataLength = 0;
          continue;
        }
        if (line.startsWith(':')) continue; // a comment: keep-alive
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let fieldValue = colon < 0 ? '' : line.slice(colon + 1);
        if (fieldValue.startsWith(' ')) fieldValue = fieldValue.slice(1);
        if (field === 'event') event = fieldValue;
        else if (field === 'data') {
          dataLength += fieldValue.length + 1;
          if (dataLength > MAX_EVENT_DATA_LENGTH) throw tooLong('event', MAX_EVENT_DATA_LENGTH);
          data.push(fieldValue);
        }
        // id and retry do not matter here: the SDK does not reconnect the stream, it polls.
      }
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    // Stop the download when the consumer stops early (a final status, a timeout).
    reader.cancel().catch(() => {});
  }
}

function tooLong(what: 'line' | 'event', limit: number): UnexpectedResponseError {
  return new UnexpectedResponseError(
    `The event stream sent ${what === 'line' ? 'a line' : 'an event'} longer than ${limit} characters; it is not an agentauth stream.`,
  );
}
