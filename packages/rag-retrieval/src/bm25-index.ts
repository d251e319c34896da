import { TopK, type Scored } from './top-k.js';

/** BM25 parameters. */
export interface Bm25Options {
  /** Term-frequency saturation. Default 0.9 (Anserini's default; tuned for short passages). */
  k1?: number;
  /** Length normalisation, 0 (none) to 1 (full). Default 0.4. */
  b?: number;
}

/**
 * Postings of one term, slots ascending (the pruned search looks slots up). Loaded indexes keep
 * views of the file until a document adds to them. Added postings go to plain arrays while a list
 * is short (most terms of a vocabulary occur a few times, and a typed array costs some 150 bytes
 * more), then to typed arrays that grow by doubling.
 */
interface Postings {
  slots: number[] | Uint32Array;
  frequencies: number[] | Uint32Array;
  /** Postings held (typed arrays may have spare room at the end). */
  length: number;
  /**
   * Largest f / (f + norm(d)) over the postings, computed when the average document length was
   * `boundAverage`: the term's score bound for top-k pruning. NaN until a query needs it.
   */
  maxRatio: number;
  boundAverage: number;
  /** False for lists read from a file until checked (files of earlier versions may be unsorted). */
  sorted: boolean;
}

/** A query's view of one term's postings: typed arrays, however they are stored. */
interface PostingList {
  slots: Uint32Array;
  frequencies: Uint32Array;
  length: number;
}

/** Lists up to this long are kept in plain arrays (see {@link Postings}). */
const shortList = 16;

/** The serialised form of a {@link Bm25Index} (see `KnowledgeBase` for how it is stored). @internal */
export interface Bm25Snapshot {
  k1: number;
  b: number;
  terms: string[];
  /** Per term, the number of postings; postings are concatenated in `slots`/`frequencies`. */
  counts: Uint32Array;
  /** Per term, ascending (files of earlier versions may not be: they are sorted on first search). */
  slots: Uint32Array;
  frequencies: Uint32Array;
  /** Document slots and their lengths in terms. */
  documentSlots: Uint32Array;
  documentLengths: Uint32Array;
}

/** At most this many distinct query terms are scored (the rarest ones): a 10,000-word query stays fast. */
const maxQueryTerms = 1024;

/**
 * Score bounds are inflated by this fraction, and a document is dropped only when it falls short
 * of the k-th best score by more than this fraction of it, so that rounding can never prune a true
 * top-k document (the bounds add up in a different order than scores do).
 */
const tolerance = 1e-9;

/** A term's bound is recomputed when the average document length moved this much since. */
const boundDrift = 1.1;

/**
 * Below this many postings per slot, accumulators are tracked in a list of touched slots;
 * above it, a branch-free pass over the postings and one scan of all accumulators is faster.
 */
const sparseRatio = 1 / 8;

/** How {@link Bm25Index.search} finds the top k. @internal */
export type Bm25Strategy =
  /** Pruned when the query's postings are many and the common terms' bounds small, else exhaustive. */
  | 'auto'
  /** Score every posting of every query term. */
  | 'exhaustive'
  /** Stop scoring documents that cannot reach the top k (see {@link Bm25Index}). */
  | 'pruned';

/** Options of {@link Bm25Index.search}. @internal */
export interface Bm25SearchOptions {
  /** Default `auto`. Every strategy returns the same results; the others are for tests and benchmarks. */
  strategy?: Bm25Strategy;
}

/**
 * An in-memory BM25 inverted index over integer slots (the knowledge base maps slots to chunks).
 * Scores use Lucene's BM25: idf = ln(1 + (N − n + 0.5) / (n + 0.5)), so common terms never score negative.
 * Removal is lazy (postings of removed slots are skipped and dropped on the next snapshot).
 *
 * Search is exact top-k, term at a time into reused typed-array accumulators, rarest term first,
 * with MaxScore-style pruning (Turtle & Flood, 1995): each term has an upper bound of what it can
 * add to a score, and once the bounds of the terms left sum to less than the k-th best partial
 * score, no document still at zero can enter the top k. The long lists of the common terms left
 * then only update the documents that can still make it, and those shrink after every term.
 * When the terms look alike (bounds close together, as in a corpus that recombines a few hundred
 * abstracts), that bookkeeping costs more than it saves, and the search scores every posting.
 * Every strategy adds a document's term scores in the same order, so all return identical results.
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
  /** One past the highest slot ever indexed (the arrays have room beyond it). */
  #slotEnd = 0;
  #count = 0;
  #totalLength = 0;
  /** Score accumulators (zero between searches) and the slots touched, reused by every search. */
  #scores = new Float64Array(0);
  #touched = new Uint32Array(0);

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
      if (!postings) {
        postings = {
          slots: [],
          frequencies: [],
          length: 0,
          maxRatio: NaN,
          boundAverage: NaN,
          sorted: true,
        };
        this.#postings.set(term, postings);
      }
      insertPosting(postings, slot, frequency);
      if (!Number.isNaN(postings.maxRatio)) {
        // Keep the bound valid for the new posting (at the average it was computed for).
        const norm = this.k1 * (1 - this.b + (this.b * terms.length) / postings.boundAverage);
        postings.maxRatio = Math.max(postings.maxRatio, frequency / (frequency + norm));
      }
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
   * The `topK` best slots for the query terms (repeats in the query count as weight), best first;
   * equal scores rank the lower slot first.
   * @param filter - When given, only slots for which it returns true are ranked.
   */
  search(
    queryTerms: readonly string[],
    topK: number,
    filter?: (slot: number) => boolean,
    options: Bm25SearchOptions = {},
  ): Scored[] {
    const size = this.#count;
    const k = Math.floor(topK);
    if (size === 0 || queryTerms.length === 0 || !(k > 0)) return [];
    const counts = new Map<string, number>();
    for (const term of queryTerms)
      if (this.#postings.has(term)) counts.set(term, (counts.get(term) ?? 0) + 1);
    if (counts.size === 0) return [];
    // Rarest first (ties in query order): the order in which every strategy adds up a score.
    const terms = [...counts.keys()]
      .sort((a, b) => this.#postings.get(a)!.length - this.#postings.get(b)!.length)
      .slice(0, maxQueryTerms);
    const stored = terms.map((term) => this.#postings.get(term)!);
    const lists = stored.map(postingList);
    let postingCount = 0;
    const weights = terms.map((term, i) => {
      const documentFrequency = lists[i]!.length;
      postingCount += documentFrequency;
      const idf = Math.log(1 + (size - documentFrequency + 0.5) / (documentFrequency + 0.5));
      return idf * counts.get(term)! * (this.k1 + 1);
    });
    if (this.#scores.length < this.#lengths.length) {
      this.#scores = new Float64Array(this.#lengths.length);
      this.#touched = new Uint32Array(this.#lengths.length);
    }
    const top = new TopK(k);
    const strategy = options.strategy ?? 'auto';
    const sparse = postingCount < this.#slotEnd * sparseRatio;
    // Bounds need every weight > 0; idf goes negative only when removed postings (not yet dropped
    // by a snapshot) outnumber the documents.
    const prunable = weights.every((weight) => weight > 0);
    if (strategy === 'pruned' || (strategy === 'auto' && !sparse && prunable)) {
      this.#scorePruned(stored, lists, weights, postingCount, top, k, filter, strategy === 'auto');
    } else if (sparse) {
      this.#scoreSparse(lists, weights, top, filter);
    } else {
      for (let t = 0; t < lists.length; t++) this.#accumulate(lists[t]!, weights[t]!);
      this.#collectDense(top, filter);
    }
    return top.sorted();
  }

  /** Exhaustive for few postings: only the slots touched are visited afterwards. */
  #scoreSparse(
    lists: readonly PostingList[],
    weights: readonly number[],
    top: TopK,
    filter: ((slot: number) => boolean) | undefined,
  ): void {
    const scores = this.#scores;
    const touched = this.#touched;
    const lengths = this.#lengths;
    const removed = this.#removed;
    const checkRemoved = this.#removedCount > 0;
    const { constant, perTerm } = this.#norm();
    let touchedCount = 0;
    for (let t = 0; t < lists.length; t++) {
      const { slots, frequencies, length } = lists[t]!;
      const weight = weights[t]!;
      for (let i = 0; i < length; i++) {
        const slot = slots[i]!;
        if (checkRemoved && removed[slot] === 1) continue;
        const frequency = frequencies[i]!;
        const score = scores[slot]!;
        // Every contribution is > 0 (idf > 0, frequency >= 1), so 0 means "not touched yet".
        if (score === 0) touched[touchedCount++] = slot;
        const norm = constant + perTerm * lengths[slot]!;
        scores[slot] = score + (weight * frequency) / (frequency + norm);
      }
    }
    for (let i = 0; i < touchedCount; i++) {
      const slot = touched[i]!;
      const score = scores[slot]!;
      scores[slot] = 0;
      if (score < top.threshold) continue;
      if (filter && !filter(slot)) continue;
      top.push(slot, score);
    }
  }

  /** Add one term's scores into the accumulators (no bookkeeping: the hot loop of a search). */
  #accumulate(postings: PostingList, weight: number): void {
    const { slots, frequencies, length } = postings;
    const scores = this.#scores;
    const lengths = this.#lengths;
    const { constant, perTerm } = this.#norm();
    if (this.#removedCount > 0) {
      const removed = this.#removed;
      for (let i = 0; i < length; i++) {
        const slot = slots[i]!;
        if (removed[slot] === 1) continue;
        const frequency = frequencies[i]!;
        const norm = constant + perTerm * lengths[slot]!;
        scores[slot] = scores[slot]! + (weight * frequency) / (frequency + norm);
      }
      return;
    }
    for (let i = 0; i < length; i++) {
      const slot = slots[i]!;
      const frequency = frequencies[i]!;
      const norm = constant + perTerm * lengths[slot]!;
      scores[slot] = scores[slot]! + (weight * frequency) / (frequency + norm);
    }
  }

  /** Push every non-zero accumulator into `top` (filtered) and clear them all. */
  #collectDense(top: TopK, filter: ((slot: number) => boolean) | undefined): void {
    const scores = this.#scores;
    const end = this.#slotEnd;
    for (let slot = 0; slot < end; slot++) {
      const score = scores[slot]!;
      // Zero (untouched) never passes once the heap is full; before that it is skipped here.
      if (score < top.threshold || score === 0) continue;
      if (filter && !filter(slot)) continue;
      top.push(slot, score);
    }
    scores.fill(0, 0, end);
  }

  /**
   * Pruned search. Phase 1 scores terms, rarest first, into the accumulators while a document
   * still at zero could reach the top k. Phase 2 keeps the touched documents that can still make
   * it as candidates, adds the remaining terms' scores to them only (looking each candidate up in
   * a long list, or one pass over a list when candidates are many), and after every term drops
   * the candidates that fell out of reach.
   * @param adaptive - Fall back to scoring everything when pruning does not look worthwhile.
   */
  #scorePruned(
    stored: readonly Postings[],
    lists: readonly PostingList[],
    weights: readonly number[],
    postingCount: number,
    top: TopK,
    k: number,
    filter: ((slot: number) => boolean) | undefined,
    adaptive: boolean,
  ): void {
    const termCount = lists.length;
    // remaining[t]: the most that terms t.. can add to a score together.
    const remaining = new Float64Array(termCount + 1);
    const averageLength = this.#averageLength();
    for (let t = termCount - 1; t >= 0; t--) {
      const bound = weights[t]! * this.#maxRatio(stored[t]!, averageLength) * (1 + tolerance);
      remaining[t] = remaining[t + 1]! + bound;
    }
    const scores = this.#scores;
    const touched = this.#touched;
    const lengths = this.#lengths;
    const removed = this.#removed;
    const checkRemoved = this.#removedCount > 0;
    const { constant, perTerm } = this.#norm();
    // For the k-th best partial score, only needed once k documents were touched.
    const heap = new Float64Array(k <= postingCount ? k : 0);
    // A document needs at least `limit` to enter (the k-th best partial score less the margin).
    let limit = -Infinity;
    // An upper bound of the k-th best partial score, so that it is only computed when it could
    // end phase 1: scoring a term moves the k-th best up by at most the term's bound (at most
    // k − 1 partial scores were above it).
    let kthAtMost = 0;
    let touchedCount = 0;
    let firstListCount = 0;
    let t = 0;
    for (; t < termCount; t++) {
      if (touchedCount >= k && remaining[t]! < kthAtMost) {
        // Any prefix of `touched` holds distinct documents, so its k-th best is a lower bound
        // too: first try the documents of the rarest term (the likeliest leaders), which is cheap.
        let threshold =
          firstListCount >= k
            ? kthBestOf(scores, touched, firstListCount, heap, k, filter)
            : -Infinity;
        if (!(threshold > 0 && remaining[t]! < threshold - threshold * tolerance))
          threshold = kthBestOf(scores, touched, touchedCount, heap, k, filter);
        if (threshold > 0) {
          limit = threshold - threshold * tolerance;
          if (remaining[t]! < limit) break;
          kthAtMost = threshold;
        }
      }
      const { slots, frequencies, length } = lists[t]!;
      const weight = weights[t]!;
      for (let i = 0; i < length; i++) {
        const slot = slots[i]!;
        if (checkRemoved && removed[slot] === 1) continue;
        const frequency = frequencies[i]!;
        const score = scores[slot]!;
        if (score === 0) touched[touchedCount++] = slot;
        const norm = constant + perTerm * lengths[slot]!;
        scores[slot] = score + (weight * frequency) / (frequency + norm);
      }
      kthAtMost += remaining[t]! - remaining[t + 1]!;
      if (t === 0) firstListCount = touchedCount;
      if (adaptive && touchedCount >= k) {
        // Decide once whether pruning looks worth its bookkeeping: the k-th best score only
        // grows, so the terms whose bounds sum below it now will surely be skipped. Pruning pays
        // when those hold at least half of the postings left; when the terms are all alike (as
        // in a corpus of recombined sentences), scoring everything without it is faster.
        adaptive = false;
        const threshold = kthBestOf(scores, touched, touchedCount, heap, k, filter);
        let skippable = 0;
        let left = 0;
        for (let u = termCount - 1; u > t; u--) {
          left += lists[u]!.length;
          if (remaining[u]! < threshold) skippable = left;
        }
        if (skippable * 2 < left) {
          for (t++; t < termCount; t++) this.#accumulate(lists[t]!, weights[t]!);
          this.#collectDense(top, filter);
          return;
        }
        if (threshold > 0) {
          limit = threshold - threshold * tolerance;
          kthAtMost = threshold;
          if (remaining[t + 1]! < limit) {
            t++;
            break;
          }
        }
      }
    }

    // Candidates: touched documents that can still reach the limit (the rest go back to zero).
    const candidates = touched;
    let candidateCount = 0;
    const needed = limit - remaining[t]!;
    for (let i = 0; i < touchedCount; i++) {
      const slot = touched[i]!;
      if (scores[slot]! >= needed && (!filter || filter(slot))) candidates[candidateCount++] = slot;
      else scores[slot] = 0;
    }
    for (; t < termCount && candidateCount > 0; t++) {
      const { slots, frequencies, length } = lists[t]!;
      const weight = weights[t]!;
      if (candidateCount * 24 < length) {
        // Few candidates: look each one up.
        for (let c = 0; c < candidateCount; c++) {
          const slot = candidates[c]!;
          const position = lowerBound(slots, length, slot);
          if (position === length || slots[position] !== slot) continue;
          const frequency = frequencies[position]!;
          const norm = constant + perTerm * lengths[slot]!;
          scores[slot] = scores[slot]! + (weight * frequency) / (frequency + norm);
        }
      } else {
        // Many: one pass over the list; candidates are the non-zero accumulators.
        for (let i = 0; i < length; i++) {
          const slot = slots[i]!;
          const score = scores[slot]!;
          if (score === 0) continue;
          const frequency = frequencies[i]!;
          const norm = constant + perTerm * lengths[slot]!;
          scores[slot] = score + (weight * frequency) / (frequency + norm);
        }
      }
      if (candidateCount > k && t + 1 < termCount) {
        const threshold = kthBestOf(scores, candidates, candidateCount, heap, k, undefined);
        limit = threshold - threshold * tolerance;
        const stillNeeded = limit - remaining[t + 1]!;
        let kept = 0;
        for (let c = 0; c < candidateCount; c++) {
          const slot = candidates[c]!;
          if (scores[slot]! >= stillNeeded) candidates[kept++] = slot;
          else scores[slot] = 0;
        }
        candidateCount = kept;
      }
    }
    for (let c = 0; c < candidateCount; c++) {
      const slot = candidates[c]!;
      const score = scores[slot]!;
      scores[slot] = 0;
      if (score >= top.threshold) top.push(slot, score);
    }
  }

  /** norm(d) = k1·(1 − b + b·|d|/avg) = constant + perTerm·|d|. */
  #norm(): { constant: number; perTerm: number } {
    return {
      constant: this.k1 * (1 - this.b),
      perTerm: (this.k1 * this.b) / this.#averageLength(),
    };
  }

  #averageLength(): number {
    return this.#totalLength / this.#count || 1;
  }

  /**
   * An upper bound of f / (f + norm(d)) over a term's postings at `averageLength`. Computed on
   * first use and kept (adds update it); when the average grows from a to a', every norm shrinks
   * by at most a/a', so the kept value times a'/a stays a bound. Recomputed after large drifts.
   */
  #maxRatio(postings: Postings, averageLength: number): number {
    const drift = averageLength / postings.boundAverage;
    if (Number.isNaN(postings.maxRatio) || !(drift <= boundDrift && drift >= 1 / boundDrift)) {
      const constant = this.k1 * (1 - this.b);
      const perTerm = (this.k1 * this.b) / averageLength;
      const { slots, frequencies, length } = postings;
      const lengths = this.#lengths;
      let max = 0;
      for (let i = 0; i < length; i++) {
        const documentLength = lengths[slots[i]!]!;
        if (documentLength < 0) continue; // removed
        const frequency = frequencies[i]!;
        const ratio = frequency / (frequency + constant + perTerm * documentLength);
        if (ratio > max) max = ratio;
      }
      postings.maxRatio = max;
      postings.boundAverage = averageLength;
      return max;
    }
    return postings.maxRatio * Math.max(1, drift);
  }

  /** A compact copy of the index for storage. */
  snapshot(): Bm25Snapshot {
    this.#compact();
    const terms = [...this.#postings.keys()];
    const counts = new Uint32Array(terms.length);
    let total = 0;
    terms.forEach((term, i) => {
      counts[i] = this.#postings.get(term)!.length;
      total += counts[i]!;
    });
    const slots = new Uint32Array(total);
    const frequencies = new Uint32Array(total);
    let offset = 0;
    for (const term of terms) {
      const postings = this.#postings.get(term)!;
      const list = postingList(postings);
      slots.set(list.slots.subarray(0, list.length), offset);
      frequencies.set(list.frequencies.subarray(0, list.length), offset);
      offset += list.length;
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
        length: count,
        maxRatio: NaN,
        boundAverage: NaN,
        // Checked on first use (this package writes slots ascending; earlier versions may not have).
        sorted: false,
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
    if (slot >= this.#slotEnd) this.#slotEnd = slot + 1;
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
      for (let i = 0; i < postings.length; i++) {
        const slot = postings.slots[i]!;
        if (removed[slot] === 1) continue;
        slots.push(slot);
        frequencies.push(postings.frequencies[i]!);
      }
      if (slots.length === 0) this.#postings.delete(term);
      else {
        const long = slots.length > shortList;
        this.#postings.set(term, {
          slots: long ? Uint32Array.from(slots) : slots,
          frequencies: long ? Uint32Array.from(frequencies) : frequencies,
          length: slots.length,
          maxRatio: NaN,
          boundAverage: NaN,
          sorted: postings.sorted,
        });
      }
    }
    this.#removed.fill(0);
    this.#removedCount = 0;
  }
}

/**
 * The k-th best of `values[slots[i]]` for `i` in `[0, count)` among the positive values whose
 * slot passes `filter` (a min-heap of k in `heap`, started at zeros so that one comparison rejects
 * most values), or -Infinity when fewer pass. With partial scores, a lower bound of the final
 * k-th best score, since scores only grow.
 */
function kthBestOf(
  values: Float64Array,
  slots: Uint32Array,
  count: number,
  heap: Float64Array,
  k: number,
  filter: ((index: number) => boolean) | undefined,
): number {
  heap.fill(0, 0, k);
  for (let i = 0; i < count; i++) {
    const value = values[slots[i]!]!;
    if (value <= heap[0]!) continue;
    if (filter && !filter(slots[i]!)) continue;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= k) break;
      const right = left + 1;
      const child = right < k && heap[right]! < heap[left]! ? right : left;
      if (heap[child]! >= value) break;
      heap[index] = heap[child]!;
      index = child;
    }
    heap[index] = value;
  }
  return heap[0]! > 0 ? heap[0]! : -Infinity;
}

/** Typed arrays of a term's postings for scoring (short lists stored as plain arrays are copied). */
function postingList(postings: Postings): PostingList {
  ensureSorted(postings);
  const { slots, frequencies, length } = postings;
  return Array.isArray(slots)
    ? { slots: Uint32Array.from(slots), frequencies: Uint32Array.from(frequencies), length }
    : { slots, frequencies: frequencies as Uint32Array, length };
}

/** Add a posting, keeping slots ascending (the knowledge base only appends; replacing a lower slot inserts). */
function insertPosting(postings: Postings, slot: number, frequency: number): void {
  const length = postings.length;
  if (Array.isArray(postings.slots)) {
    const slots = postings.slots;
    const frequencies = postings.frequencies as number[];
    if (length < shortList) {
      let position = length;
      while (position > 0 && slots[position - 1]! > slot) position--;
      if (position === length) {
        slots.push(slot);
        frequencies.push(frequency);
      } else {
        slots.splice(position, 0, slot);
        frequencies.splice(position, 0, frequency);
      }
      postings.length = length + 1;
      return;
    }
  }
  ensureSorted(postings);
  let { slots, frequencies } = postings;
  if (Array.isArray(slots) || length === slots.length) {
    // A short list grows out of plain arrays; loaded postings are views of the file: copy them
    // into typed arrays with room.
    const capacity = Math.max(shortList, length) * 2;
    const grownSlots = new Uint32Array(capacity);
    const grownFrequencies = new Uint32Array(capacity);
    grownSlots.set(Array.isArray(slots) ? slots : slots.subarray(0, length));
    grownFrequencies.set(
      Array.isArray(frequencies) ? frequencies : frequencies.subarray(0, length),
    );
    postings.slots = slots = grownSlots;
    postings.frequencies = frequencies = grownFrequencies;
  }
  const typedFrequencies = frequencies as Uint32Array;
  let position = length;
  if (length > 0 && slots[length - 1]! > slot) {
    position = lowerBound(slots, length, slot);
    slots.copyWithin(position + 1, position, length);
    typedFrequencies.copyWithin(position + 1, position, length);
  }
  slots[position] = slot;
  typedFrequencies[position] = frequency;
  postings.length = length + 1;
}

/** Sort a term's postings by slot if they are not (a file written by an index that allowed that). */
function ensureSorted(postings: Postings): void {
  if (postings.sorted) return;
  postings.sorted = true;
  const { slots, frequencies, length } = postings;
  let sorted = true;
  for (let i = 1; i < length && sorted; i++) sorted = slots[i - 1]! < slots[i]!;
  if (sorted) return;
  const order = Array.from({ length }, (_, i) => i).sort((a, b) => slots[a]! - slots[b]!);
  postings.slots = Uint32Array.from(order, (i) => slots[i]!);
  postings.frequencies = Uint32Array.from(order, (i) => frequencies[i]!);
}

/** The first position in `slots[0..end)` holding a slot >= `target` (or `end`). */
function lowerBound(slots: Uint32Array, end: number, target: number): number {
  let low = 0;
  let high = end;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (slots[middle]! < target) low = middle + 1;
    else high = middle;
  }
  return low;
}
