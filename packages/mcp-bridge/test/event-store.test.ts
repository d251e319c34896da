import { describe, expect, it } from '@jest/globals';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { InMemoryEventStore } from '../src/index.js';

const message = (id: number): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'm', params: { id } });

describe('InMemoryEventStore', () => {
  it('replays only the later events of the same stream', async () => {
    const store = new InMemoryEventStore();
    const a1 = await store.storeEvent('a', message(1));
    await store.storeEvent('b', message(2));
    await store.storeEvent('a', message(3));
    await store.storeEvent('a', message(4));
    const replayed: unknown[] = [];
    const stream = await store.replayEventsAfter(a1, {
      send: async (_id, sent) => {
        replayed.push((sent as unknown as { params: { id: number } }).params.id);
      },
    });
    expect(stream).toBe('a');
    expect(replayed).toEqual([3, 4]);
    expect(await store.getStreamIdForEventId(a1)).toBe('a');
  });

  it('keeps at most maxEvents, dropping the oldest', async () => {
    const store = new InMemoryEventStore({ maxEvents: 2 });
    const first = await store.storeEvent('a', message(1));
    await store.storeEvent('a', message(2));
    await store.storeEvent('a', message(3));
    expect(await store.getStreamIdForEventId(first)).toBeUndefined();
  });
});
