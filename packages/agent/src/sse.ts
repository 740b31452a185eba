/**
 * A server-sent events reader over a fetch body (the WHATWG "event stream" format), so that no
 * EventSource is needed: fetch streams in every runtime, EventSource is not in Node.
 */

/** One dispatched event: its type (`message` when the stream named none) and its data. */
export interface ServerSentEvent {
  event: string;
  data: string;
}

/**
 * Yields the events of a `text/event-stream` body as they arrive. `onActivity` is called for
 * every chunk received, comments (keep-alives) included. Lines may end in CRLF, LF or CR and
 * may be split anywhere between chunks.
 */
export async function* readEvents(body: ReadableStream<Uint8Array>, onActivity: () => void = () => {}): AsyncGenerator<ServerSentEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let first = true;
  let afterCR = false;
  let event = '';
  let data: string[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      onActivity();
      buffer += decoder.decode(value, { stream: true });
      if (first && buffer.length > 0) {
        if (buffer.charCodeAt(0) === 0xfeff) buffer = buffer.slice(1);
        first = false;
      }
      for (;;) {
        // A CR ends a line at once; an LF right after it (maybe in the next chunk) is its pair.
        if (afterCR && buffer.length > 0) {
          if (buffer.startsWith('\n')) buffer = buffer.slice(1);
          afterCR = false;
        }
        const end = buffer.search(/\r\n|\r|\n/);
        if (end < 0) break;
        const line = buffer.slice(0, end);
        const crlf = buffer.startsWith('\r\n', end);
        afterCR = !crlf && buffer[end] === '\r';
        buffer = buffer.slice(crlf ? end + 2 : end + 1);
        if (line === '') {
          if (data.length > 0) yield { event: event || 'message', data: data.join('\n') };
          event = '';
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue; // a comment: keep-alive
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let fieldValue = colon < 0 ? '' : line.slice(colon + 1);
        if (fieldValue.startsWith(' ')) fieldValue = fieldValue.slice(1);
        if (field === 'event') event = fieldValue;
        else if (field === 'data') data.push(fieldValue);
        // id and retry do not matter here: the SDK does not reconnect the stream, it polls.
      }
    }
  } finally {
    // Stop the download when the consumer stops early (a final status, a timeout).
    reader.cancel().catch(() => {});
  }
}
