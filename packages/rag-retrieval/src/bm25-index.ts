import { TopK, type Scored } from './top-k.js';

/** BM25 parameters. */
export interface Bm25Options {
  /** Term-frequency saturation. Default 0.9 (Anserini's default; tuned for short passages). */
  k1?: number;
  /** Length normalisation, 0 (none) to 1 (full). Default 0.4. */
  b?: number;
}

/** Postings of one term. Loaded indexes keep typed arrays (views of the file) until a document adds to them. */
interface Postings {
  slots: number[] | Uint32Array;
  frequencies: number[] | Uint32Array;
}

/** The serialised form of a {@link Bm25Index} (see `KnowledgeBase` for how it is stored). @internal */
export interface Bm25Snapshot {
  k1: number;
  b: number;
  terms: string[];
  /** Per term, the number of postings; postings are concatenated in `slots`/`frequencies`. */
  counts: Uint32Array;
  slots: Uint32Array;
  frequencies: Uint32Array;
  /** Document slots and their lengths in terms. */
  documentSlots: Uint32Array;
  documentLengths: Uint32Array;
}

/** At most this many distinct query terms are scored (the rarest ones): a 10,000-word query stays fast. */
const maxQueryTerms = 1024;

/**
 * An in-memory BM25 inverted index over integer slots (the knowledge base maps slots to chunks).
 * Scores use Lucene's BM25: idf = ln(1 + (N − n + 0.5) / (n + 0.5)), so common terms never score negative.
 * Removal is lazy (postings of removed slots are skipped and dropped on the next snapshot).
 * @internal
 */
export class Bm25Index {
  readonly k1: number;
  readonly b: number;
  readonly #postings = new Map<string, Postings>();
  /** Length in terms of each slot's document, -1 for slots without one (typed: the scoring loop reads it per posting). */
  #lengths = new Int32Array(0).fill(-1);
  /** 1 for slots removed since their postings were written; skipped while scoring. */
  #removed = new Uint8Array(0);
  #removedCount = 0;
  #count = 0;
  #totalLength = 0;
  #scores = new Float64Array(0);

  constructor(options: Bm25Options = {}) {
    this.k1 = options.k1 ?? 0.9;
    this.b = options.b ?? 0.4;
    if (!(this.k1 >= 0) || !(this.b >= 0 && this.b <= 1)) {
      throw new RangeError(`BM25 needs k1 >= 0 and 0 <= b <= 1 (got k1=${this.k1}, b=${this.b}).`);
    }
  }

  /** Number of indexed documents. */
  get size(): number {
    return this.#count;
  }

  /** Index `terms` under `slot`. A slot already present is replaced. */
  add(slot: number, terms: readonly string[]): void {
    this.#ensureCapacity(slot);
    if (this.#lengths[slot]! >= 0) this.remove(slot);
    if (this.#removed[slot] === 1) this.#compact();
    const frequencies = new Map<string, number>();
    for (const term of terms) frequencies.set(term, (frequencies.get(term) ?? 0) + 1);
    for (const [term, frequency] of frequencies) {
      let postings = this.#postings.get(term);
      if (!postings) this.#postings.set(term, (postings = { slots: [], frequencies: [] }));
      if (!Array.isArray(postings.slots)) postings.slots = Array.from(postings.slots);
      if (!Array.isArray(postings.frequencies))
        postings.frequencies = Array.from(postings.frequencies);
      (postings.slots as number[]).push(slot);
      (postings.frequencies as number[]).push(frequency);
    }
    this.#lengths[slot] = terms.length;
    this.#count++;
    this.#totalLength += terms.length;
  }

  /** Remove `slot`; unknown slots are ignored. */
  remove(slot: number): void {
    const length = this.#lengths[slot];
    if (length === undefined || length < 0) return;
    this.#lengths[slot] = -1;
    this.#count--;
    this.#totalLength -= length;
    this.#removed[slot] = 1;
    this.#removedCount++;
  }

  /**
   * The `topK` best slots for the query terms (repeats in the query count as weight).
   * @param filter - When given, only slots for which it returns true are ranked.
   */
  search(
    queryTerms: readonly string[],
    topK: number,
    filter?: (slot: number) => boolean,
  ): Scored[] {
    const size = this.#count;
    if (size === 0 || queryTerms.length === 0 || topK <= 0) return [];
    const weights = new Map<string, number>();
    for (const term of queryTerms)
      if (this.#postings.has(term)) weights.set(term, (weights.get(term) ?? 0) + 1);
    let terms = [...weights.keys()];
    if (terms.length > maxQueryTerms) {
      terms = terms
        .sort((a, b) => this.#postings.get(a)!.slots.length - this.#postings.get(b)!.slots.length)
        .slice(0, maxQueryTerms);
    }
    const averageLength = this.#totalLength / size || 1;
    if (this.#scores.length < this.#lengths.length)
      this.#scores = new Float64Array(this.#lengths.length);
    const scores = this.#scores;
    const lengths = this.#lengths;
    const removed = this.#removed;
    const checkRemoved = this.#removedCount > 0;
    const touched: number[] = [];
    const k1 = this.k1;
    // norm(d) = k1·(1 − b + b·|d|/avg) = constant + perTerm·|d|
    const constant = k1 * (1 - this.b);
    const perTerm = (k1 * this.b) / averageLength;
    for (const term of terms) {
      const postings = this.#postings.get(term)!;
      const documentFrequency = postings.slots.length;
      const idf = Math.log(1 + (size - documentFrequency + 0.5) / (documentFrequency + 0.5));
      const weight = idf * weights.get(term)! * (k1 + 1);
      const { slots, frequencies } = postings;
      for (let i = 0; i < slots.length; i++) {
        const slot = slots[i]!;
        if (checkRemoved && removed[slot] === 1) continue;
        const frequency = frequencies[i]!;
        if (scores[slot] === 0) touched.push(slot);
        scores[slot]! += (weight * frequency) / (frequency + constant + perTerm * lengths[slot]!);
      }
    }
    const top = new TopK(topK);
    for (const slot of touched) {
      const score = scores[slot]!;
      scores[slot] = 0;
      if (score < top.threshold) continue;
      if (filter && !filter(slot)) continue;
      top.push(slot, score);
    }
    return top.sorted();
  }

  /** A compact copy of the index for storage. */
  snapshot(): Bm25Snapshot {
    this.#compact();
    const terms = [...this.#postings.keys()];
    const counts = new Uint32Array(terms.length);
    let total = 0;
    terms.forEach((term, i) => {
      counts[i] = this.#postings.get(term)!.slots.length;
      total += counts[i]!;
    });
    const slots = new Uint32Array(total);
    const frequencies = new Uint32Array(total);
    let offset = 0;
    for (const term of terms) {
      const postings = this.#postings.get(term)!;
      slots.set(postings.slots, offset);
      frequencies.set(postings.frequencies, offset);
      offset += postings.slots.length;
    }
    const documentSlots: number[] = [];
    const documentLengths: number[] = [];
    this.#lengths.forEach((length, slot) => {
      if (length >= 0) {
        documentSlots.push(slot);
        documentLengths.push(length);
      }
    });
    return {
      k1: this.k1,
      b: this.b,
      terms,
      counts,
      slots,
      frequencies,
      documentSlots: Uint32Array.from(documentSlots),
      documentLengths: Uint32Array.from(documentLengths),
    };
  }

  /** Rebuild an index from {@link Bm25Index.snapshot}. */
  static fromSnapshot(snapshot: Bm25Snapshot): Bm25Index {
    const index = new Bm25Index({ k1: snapshot.k1, b: snapshot.b });
    let offset = 0;
    snapshot.terms.forEach((term, i) => {
      const count = snapshot.counts[i]!;
      index.#postings.set(term, {
        slots: snapshot.slots.subarray(offset, offset + count),
        frequencies: snapshot.frequencies.subarray(offset, offset + count),
      });
      offset += count;
    });
    let maxSlot = -1;
    for (const slot of snapshot.documentSlots) if (slot > maxSlot) maxSlot = slot;
    index.#ensureCapacity(maxSlot);
    snapshot.documentSlots.forEach((slot, i) => {
      const length = snapshot.documentLengths[i]!;
      index.#lengths[slot] = length;
      index.#count++;
      index.#totalLength += length;
    });
    return index;
  }

  #ensureCapacity(slot: number): void {
    if (slot < this.#lengths.length) return;
    const capacity = Math.max(slot + 1, this.#lengths.length * 2, 1024);
    const lengths = new Int32Array(capacity).fill(-1);
    lengths.set(this.#lengths);
    const removed = new Uint8Array(capacity);
    removed.set(this.#removed);
    this.#lengths = lengths;
    this.#removed = removed;
  }

  /** Drop postings of removed slots. */
  #compact(): void {
    if (this.#removedCount === 0) return;
    const removed = this.#removed;
    for (const [term, postings] of this.#postings) {
      const slots: number[] = [];
      const frequencies: number[] = [];
      postings.slots.forEach((slot, i) => {
        if (removed[slot] !== 1) {
          slots.push(slot);
          frequencies.push(postings.frequencies[i]!);
        }
      });
      if (slots.length === 0) this.#postings.delete(term);
      else this.#postings.set(term, { slots, frequencies });
    }
    this.#removed.fill(0);
    this.#removedCount = 0;
  }
}
