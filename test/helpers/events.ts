/**
 * A Server-Sent Events reader over fetch, for the push tests: the events of a response, one at
 * a time, as a browser's EventSource would parse them.
 */
export interface StreamEvent {
  event: string;
  data: string;
}

export class EventReader {
  private buffer = '';
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();
  /** Comment lines seen (": keep-alive"). */
  comments: string[] = [];
  retry: number | null = null;

  constructor(readonly response: Response) {
    this.reader = response.body!.getReader();
  }

  /** The next event, or null when the stream ended; throws after `timeoutMs`. */
  async next(timeoutMs = 5000): Promise<StreamEvent | null> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const at = this.buffer.indexOf('\n\n');
      if (at >= 0) {
        const block = this.buffer.slice(0, at);
        this.buffer = this.buffer.slice(at + 2);
        let event = 'message';
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) this.comments.push(line);
          else if (line.startsWith('event: ')) event = line.slice(7);
          else if (line.startsWith('data: ')) data.push(line.slice(6));
          else if (line.startsWith('retry: ')) this.retry = Number(line.slice(7));
        }
        if (data.length > 0) return { event, data: data.join('\n') };
        continue;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no event within ${timeoutMs} ms`);
      const chunk = await Promise.race([
        this.reader.read(),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no event within ${timeoutMs} ms`)), left)),
      ]);
      if (chunk.done) return null;
      this.buffer += this.decoder.decode(chunk.value, { stream: true });
    }
  }

  /** The next event's data as JSON. */
  async nextStatus(timeoutMs?: number): Promise<Record<string, unknown> | null> {
    const event = await this.next(timeoutMs);
    if (event && event.event !== 'status') throw new Error(`unexpected event ${event.event}`);
    return event && (JSON.parse(event.data) as Record<string, unknown>);
  }

  async close(): Promise<void> {
    await this.reader.cancel().catch(() => undefined);
  }
}

/** Opens the status stream of a request. */
export async function openStatusStream(baseUrl: string, requestId: string): Promise<EventReader> {
  const response = await fetch(`${baseUrl}/api/check-status/events?request_id=${encodeURIComponent(requestId)}`, {
    headers: { accept: 'text/event-stream' },
  });
  if (response.status !== 200) throw new Error(`status stream answered ${response.status}: ${await response.text()}`);
  return new EventReader(response);
}
