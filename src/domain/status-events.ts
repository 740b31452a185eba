/**
 * Push (docs/design.md §12): who is told that an authorization request's status may have
 * changed. The store delivers every committed change on every node (PostgreSQL LISTEN/NOTIFY on
 * one dedicated connection per node; in process with SQLite); this fans it out to the waiting
 * connections of this node. It only says "look again": the watcher re-reads the status, so a
 * notification can never carry a stale or forged state.
 */
import type { Store } from '../store/types.ts';

type Watcher = () => void;

export class StatusEvents {
  private readonly watchers = new Map<string, Set<Watcher>>();
  private listening: Promise<() => Promise<void>> | undefined;

  constructor(private readonly store: Pick<Store, 'watchStatus'>) {}

  /**
   * Calls `onChange` whenever the request's status may have changed, until the returned function
   * is called. Resolves once changes are being heard, so a read after it misses nothing. The
   * first subscription opens the node's channel (a failure there rejects, and the next one
   * tries again).
   *
   * @example
   * const stop = await ctx.statusEvents.subscribe(requestId, () => void sendCurrentStatus());
   * const current = await ctx.store.requests.findStatus(requestId);
   * // … later
   * stop();
   */
  async subscribe(requestId: string, onChange: Watcher): Promise<() => void> {
    this.listening ??= this.store
      .watchStatus({ changed: (payload) => this.deliver(payload), resumed: () => this.deliver('*') })
      .catch((error: unknown) => {
        this.listening = undefined;
        throw error;
      });
    await this.listening;
    let set = this.watchers.get(requestId);
    if (!set) this.watchers.set(requestId, (set = new Set()));
    set.add(onChange);
    return () => {
      set.delete(onChange);
      if (set.size === 0 && this.watchers.get(requestId) === set) this.watchers.delete(requestId);
    };
  }

  /** How many connections wait on this node (for metrics and the benchmark). */
  get waiting(): number {
    let total = 0;
    for (const set of this.watchers.values()) total += set.size;
    return total;
  }

  private deliver(payload: string): void {
    const sets = payload === '*' ? [...this.watchers.values()] : [this.watchers.get(payload)];
    for (const set of sets) for (const watcher of [...(set ?? [])]) watcher();
  }

  async close(): Promise<void> {
    const stop = await this.listening?.catch(() => undefined);
    this.listening = undefined;
    await stop?.();
  }
}
