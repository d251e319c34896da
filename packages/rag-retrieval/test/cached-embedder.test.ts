import { describe, expect, it } from '@jest/globals';
import type { Embedder } from '@quiver/core';
import { CachedEmbedder, HashedNgramEmbedder } from '../src/index.js';

/** Counts what reaches the real embedder. */
function counting(): Embedder & { calls: string[][] } {
  const inner = new HashedNgramEmbedder({ dimensions: 32 });
  const calls: string[][] = [];
  return {
    id: inner.id,
    dimensions: inner.dimensions,
    calls,
    async embed(texts) {
      calls.push(texts);
      return inner.embed(texts);
    },
  };
}

describe('CachedEmbedder', () => {
  it('embeds each distinct text once, across and within calls', async () => {
    const inner = counting();
    const cached = new CachedEmbedder(inner);
    const first = await cached.embed(['a wing', 'a tail', 'a wing']);
    const second = await cached.embed(['a tail', 'a fin']);
    expect(inner.calls).toEqual([['a wing', 'a tail'], ['a fin']]);
    expect(first[0]).toEqual(first[2]);
    expect(second[0]).toEqual(first[1]);
    expect(cached.stats).toEqual({ hits: 2, misses: 3, size: 3 });
  });

  it('evicts the least recently used vectors beyond maxEntries', async () => {
    const inner = counting();
    const cached = new CachedEmbedder(inner, { maxEntries: 2 });
    await cached.embed(['one', 'two']);
    await cached.embed(['one']); // "one" is now the most recent
    await cached.embed(['three']); // evicts "two"
    await cached.embed(['one', 'two']);
    expect(inner.calls).toEqual([['one', 'two'], ['three'], ['two']]);
  });

  it('keeps the wrapped embedder id and dimensions', () => {
    const inner = counting();
    const cached = new CachedEmbedder(inner);
    expect(cached.id).toBe(inner.id);
    expect(cached.dimensions).toBe(32);
  });
});
