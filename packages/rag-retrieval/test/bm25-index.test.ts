import { describe, expect, it } from '@jest/globals';
import { Bm25Index } from '../src/bm25-index.js';
import { decodeBm25, encodeBm25 } from '../src/bm25-codec.js';

const documents = [
  ['wing', 'flutter', 'wing'],
  ['flutter', 'panel', 'supersonic', 'speed', 'flow'],
  ['heat', 'transfer', 'slab'],
  ['wing', 'lift'],
];

function build(options = {}): Bm25Index {
  const index = new Bm25Index(options);
  documents.forEach((terms, slot) => index.add(slot, terms));
  return index;
}

/** BM25 as in Lucene, written out independently. */
function expected(query: string[], slot: number, k1 = 0.9, b = 0.4): number {
  const n = documents.length;
  const average = documents.reduce((sum, d) => sum + d.length, 0) / n;
  let score = 0;
  for (const term of new Set(query)) {
    const df = documents.filter((d) => d.includes(term)).length;
    if (df === 0) continue;
    const tf = documents[slot]!.filter((t) => t === term).length;
    if (tf === 0) continue;
    const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
    score += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * documents[slot]!.length) / average));
  }
  return score;
}

describe('Bm25Index', () => {
  it('scores with Lucene BM25 and ranks best first', () => {
    const hits = build().search(['wing', 'flutter'], 10);
    expect(hits.map((hit) => hit.slot)).toEqual([0, 3, 1]);
    for (const hit of hits)
      expect(hit.score).toBeCloseTo(expected(['wing', 'flutter'], hit.slot), 10);
  });

  it('honours k1 and b', () => {
    const hits = build({ k1: 1.2, b: 0.75 }).search(['wing'], 10);
    for (const hit of hits)
      expect(hit.score).toBeCloseTo(expected(['wing'], hit.slot, 1.2, 0.75), 10);
  });

  it('rejects invalid parameters', () => {
    expect(() => new Bm25Index({ b: 2 })).toThrow(RangeError);
    expect(() => new Bm25Index({ k1: -1 })).toThrow(RangeError);
  });

  it('cuts to topK and applies a filter', () => {
    expect(
      build()
        .search(['wing', 'flutter'], 1)
        .map((hit) => hit.slot),
    ).toEqual([0]);
    expect(
      build()
        .search(['wing', 'flutter'], 10, (slot) => slot !== 0)
        .map((hit) => hit.slot),
    ).toEqual([3, 1]);
  });

  it('removes and replaces documents', () => {
    const index = build();
    index.remove(0);
    expect(index.size).toBe(3);
    expect(index.search(['wing'], 10).map((hit) => hit.slot)).toEqual([3]);
    index.add(3, ['heat']);
    expect(index.search(['wing'], 10)).toEqual([]);
    expect(
      index
        .search(['heat'], 10)
        .map((hit) => hit.slot)
        .sort(),
    ).toEqual([2, 3]);
  });

  it('returns nothing for unknown terms, empty queries and topK 0', () => {
    expect(build().search(['nothing'], 10)).toEqual([]);
    expect(build().search([], 10)).toEqual([]);
    expect(build().search(['wing'], 0)).toEqual([]);
  });

  it('answers a 10,000-term query', () => {
    const query = Array.from({ length: 10_000 }, (_, i) => (i % 7 === 0 ? 'flutter' : `noise${i}`));
    expect(build().search(query, 10)[0]!.slot).toBe(0);
  });

  it('survives a snapshot round trip through the binary codec', () => {
    const index = build();
    index.remove(2);
    const bytes = Buffer.concat(encodeBm25(index.snapshot()));
    const restored = Bm25Index.fromSnapshot(decodeBm25(bytes));
    expect(restored.search(['wing', 'flutter', 'heat'], 10)).toEqual(
      index.search(['wing', 'flutter', 'heat'], 10),
    );
    expect(restored.size).toBe(3);
  });

  it('keeps accepting documents after it was loaded from a snapshot', () => {
    const restored = Bm25Index.fromSnapshot(
      decodeBm25(Buffer.concat(encodeBm25(build().snapshot()))),
    );
    restored.add(4, ['wing', 'wing', 'wing']);
    restored.remove(3);
    expect(restored.search(['wing'], 10).map((hit) => hit.slot)).toEqual([4, 0]);
    const again = Bm25Index.fromSnapshot(
      decodeBm25(Buffer.concat(encodeBm25(restored.snapshot()))),
    );
    expect(again.search(['wing', 'flutter'], 10)).toEqual(restored.search(['wing', 'flutter'], 10));
  });

  it('rejects damaged keyword files', () => {
    const bytes = Buffer.concat(encodeBm25(build().snapshot()));
    expect(() => decodeBm25(bytes.subarray(0, bytes.length - 4))).toThrow(/truncated/);
    expect(() => decodeBm25(Buffer.from('garbage'))).toThrow(/not a keyword index/);
  });
});
