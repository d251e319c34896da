import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { Bm25Index, type Bm25Strategy } from '../src/bm25-index.js';
import { decodeBm25, encodeBm25 } from '../src/bm25-codec.js';
import { TextAnalyzer } from '../src/text-analyzer.js';
import { cranfieldDocuments } from './helpers.js';

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

describe('Bm25Index pruning', () => {
  const analyzer = new TextAnalyzer();
  const fixture = join(__dirname, 'fixtures', 'cranfield-mini');
  const queries = readFileSync(join(fixture, 'queries.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => analyzer.analyze((JSON.parse(line) as { text: string }).text));
  const abstracts = cranfieldDocuments().map(({ chunks }) => analyzer.analyze(chunks[0]!.text));
  const strategies: Bm25Strategy[] = ['pruned', 'auto'];

  /** Every strategy returns exactly what scoring every posting returns (scores to the last bit). */
  function expectSameAsExhaustive(
    index: Bm25Index,
    depths: number[],
    filter?: (slot: number) => boolean,
  ): void {
    for (const query of queries) {
      for (const depth of depths) {
        const exhaustive = index.search(query, depth, filter, { strategy: 'exhaustive' });
        for (const strategy of strategies)
          expect(index.search(query, depth, filter, { strategy })).toEqual(exhaustive);
      }
    }
  }

  /** `count` chunks of 40–120 words recombined from Cranfield sentences (as in bench/bench.mjs). */
  function recombined(count: number): string[][] {
    const sentences = abstracts.flatMap((terms) => {
      const parts: string[][] = [];
      for (let i = 0; i < terms.length; i += 12) parts.push(terms.slice(i, i + 12));
      return parts;
    });
    const random = seeded(42);
    return Array.from({ length: count }, () => {
      const words = 40 + Math.floor(random() * 80);
      const terms: string[] = [];
      while (terms.length < words)
        terms.push(...sentences[Math.floor(random() * sentences.length)]!);
      return terms;
    });
  }

  it('ranks the Cranfield abstracts exactly as exhaustive BM25 does', () => {
    const index = new Bm25Index();
    abstracts.forEach((terms, slot) => index.add(slot, terms));
    expectSameAsExhaustive(index, [1, 10, 50, 1000]);
  });

  it('matches an independent BM25 on the Cranfield abstracts', () => {
    const index = new Bm25Index();
    abstracts.forEach((terms, slot) => index.add(slot, terms));
    const n = abstracts.length;
    const average = abstracts.reduce((sum, terms) => sum + terms.length, 0) / n;
    const counted = abstracts.map((terms) => {
      const counts = new Map<string, number>();
      for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
      return counts;
    });
    const documentFrequencies = new Map<string, number>();
    for (const counts of counted)
      for (const term of counts.keys())
        documentFrequencies.set(term, (documentFrequencies.get(term) ?? 0) + 1);
    for (const query of queries) {
      const scores = abstracts.map((terms, slot) => {
        let score = 0;
        for (const term of new Set(query)) {
          const df = documentFrequencies.get(term) ?? 0;
          const tf = counted[slot]!.get(term) ?? 0;
          if (tf === 0) continue;
          const weight = query.filter((t) => t === term).length;
          const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
          score += (weight * idf * tf * 1.9) / (tf + 0.9 * (0.6 + (0.4 * terms.length) / average));
        }
        return score;
      });
      const hits = index.search(query, 10);
      const best = [...scores].sort((a, b) => b - a).slice(0, hits.length);
      hits.forEach((hit, i) => {
        expect(hit.score).toBeCloseTo(best[i]!, 9);
        expect(hit.score).toBeCloseTo(scores[hit.slot]!, 9);
      });
    }
  });

  it('ranks chunks of recombined sentences (many similar, long posting lists) exactly', () => {
    const index = new Bm25Index();
    recombined(4000).forEach((terms, slot) => index.add(slot, terms));
    expectSameAsExhaustive(index, [1, 10, 50]);
    expectSameAsExhaustive(index, [20], (slot) => slot % 3 !== 0);
  });

  it('ranks a Zipf-distributed corpus (rare and very common terms) exactly', () => {
    const random = seeded(7);
    const vocabulary = 5000;
    const cumulative: number[] = [];
    let total = 0;
    for (let rank = 1; rank <= vocabulary; rank++) cumulative.push((total += 1 / rank));
    const draw = (): string => {
      const x = random() * total;
      let low = 0;
      let high = vocabulary - 1;
      while (low < high) {
        const middle = (low + high) >> 1;
        if (cumulative[middle]! < x) low = middle + 1;
        else high = middle;
      }
      return `w${low}`;
    };
    const index = new Bm25Index();
    for (let slot = 0; slot < 5000; slot++)
      index.add(
        slot,
        Array.from({ length: 20 + Math.floor(random() * 60) }, () => draw()),
      );
    const zipfQueries = Array.from({ length: 200 }, () =>
      Array.from({ length: 2 + Math.floor(random() * 7) }, () => draw()),
    );
    for (const query of zipfQueries) {
      for (const depth of [1, 10, 50]) {
        const exhaustive = index.search(query, depth, undefined, { strategy: 'exhaustive' });
        for (const strategy of strategies)
          expect(index.search(query, depth, undefined, { strategy })).toEqual(exhaustive);
      }
    }
  });

  it('stays exact with removed, replaced and re-added documents, before and after a snapshot', () => {
    const chunks = recombined(2000);
    const index = new Bm25Index();
    chunks.forEach((terms, slot) => index.add(slot, terms));
    for (let slot = 0; slot < 2000; slot += 7) index.remove(slot);
    expectSameAsExhaustive(index, [10, 50]);
    // Replacing a slot below the newest ones inserts into the middle of posting lists.
    index.add(14, chunks[1999]!);
    index.add(3, chunks[5]!);
    expectSameAsExhaustive(index, [10]);
    const restored = Bm25Index.fromSnapshot(
      decodeBm25(Buffer.concat(encodeBm25(index.snapshot()))),
    );
    expectSameAsExhaustive(restored, [10]);
    restored.add(1, chunks[7]!);
    restored.add(2500, chunks[9]!);
    expectSameAsExhaustive(restored, [10, 50]);
  });

  it('keeps its score bounds valid while documents are added between searches', () => {
    const chunks = recombined(1500);
    const index = new Bm25Index();
    chunks.slice(0, 300).forEach((terms, slot) => index.add(slot, terms));
    expectSameAsExhaustive(index, [10]);
    // Short documents first (the average length falls), then long ones (it rises past the drift
    // at which bounds are recomputed): the kept bounds must stay upper bounds throughout.
    for (let slot = 300; slot < 900; slot++) index.add(slot, chunks[slot]!.slice(0, 8));
    expectSameAsExhaustive(index, [10]);
    for (let slot = 900; slot < 1500; slot++)
      index.add(slot, [...chunks[slot]!, ...chunks[slot - 600]!, ...chunks[slot - 900]!]);
    expectSameAsExhaustive(index, [10, 50]);
    // Small steps: bounds are kept and scaled by the drift instead of recomputed.
    for (let step = 0; step < 10; step++) {
      for (let i = 0; i < 20; i++) {
        const slot = 1500 + step * 20 + i;
        index.add(slot, [...chunks[slot - 1500]!, ...chunks[slot - 1400]!]);
      }
      expectSameAsExhaustive(index, [10]);
    }
  });

  it('reads files whose posting lists are not in slot order', () => {
    const index = new Bm25Index();
    recombined(500).forEach((terms, slot) => index.add(slot, terms));
    const snapshot = index.snapshot();
    // Reverse every term's postings, as an index that appended replaced slots could have written.
    let offset = 0;
    for (const count of snapshot.counts) {
      snapshot.slots.subarray(offset, offset + count).reverse();
      snapshot.frequencies.subarray(offset, offset + count).reverse();
      offset += count;
    }
    const reversed = Bm25Index.fromSnapshot(snapshot);
    for (const query of queries) {
      for (const strategy of ['exhaustive', 'pruned', 'auto'] as const)
        expect(reversed.search(query, 10, undefined, { strategy })).toEqual(
          index.search(query, 10, undefined, { strategy: 'exhaustive' }),
        );
    }
  });
});

/** A small deterministic random generator (an LCG, as in the benchmark). */
function seeded(seed: number): () => number {
  let state = seed;
  return () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
}
