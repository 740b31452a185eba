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
export declare const MAX_LINE_LENGTH: number;
export declare const MAX_EVENT_DATA_LENGTH: number;
/**
 * Yields the events of a `text/event-stream` body as they arrive. `onActivity` is called for
 * every chunk received, comments (keep-alives) included. Lines may end in CRLF, LF or CR and
 * may be split anywhere between chunks. Each chunk is scanned once, from where the previous one
 * stopped, so the work is linear in what arrives. A line or an event's data longer than 64 Ki
 * characters throws {@link UnexpectedResponseError}; an aborted `signal` throws its reason.
 */
export declare function readEvents(body: ReadableStream<Uint8Array>, onActivity?: () => void, signal?: AbortSignal): AsyncGenerator<ServerSentEvent>;
