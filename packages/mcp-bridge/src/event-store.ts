import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * An in-memory {@link EventStore} for resumable Streamable HTTP streams: every message sent on a
 * stream is kept (up to `maxEvents`, oldest dropped first) so that a client that lost its
 * connection can reconnect with `Last-Event-ID` and receive what it missed.
 */
export class InMemoryEventStore implements EventStore {
  readonly #events = new Map<string, { streamId: string; message: JSONRPCMessage }>();
  readonly #maxEvents: number;
  #counter = 0;

  /** @param options.maxEvents - how many events to keep in all. Default 1000. */
  constructor(options: { maxEvents?: number } = {}) {
    this.#maxEvents = options.maxEvents ?? 1_000;
  }

  /** Keep a message sent on a stream; returns its event id (`<streamId>_<n>`). */
  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    this.#counter += 1;
    const eventId = `${streamId}_${this.#counter}`;
    this.#events.set(eventId, { streamId, message });
    while (this.#events.size > this.#maxEvents) {
      const oldest = this.#events.keys().next().value as string;
      this.#events.delete(oldest);
    }
    return eventId;
  }

  /** The stream an event was sent on, while the event is still kept. */
  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.#events.get(eventId)?.streamId;
  }

  /**
   * Send again, in order, the events of the same stream that came after `lastEventId`.
   * @returns the stream id, or `''` when the event is no longer kept
   */
  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const last = this.#events.get(lastEventId);
    if (!last) return '';
    let found = false;
    for (const [eventId, event] of this.#events) {
      if (eventId === lastEventId) {
        found = true;
        continue;
      }
      if (found && event.streamId === last.streamId) await send(eventId, event.message);
    }
    return last.streamId;
  }
}
