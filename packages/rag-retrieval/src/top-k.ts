/** One scored item. @internal */
export interface Scored {
  slot: number;
  score: number;
}

/**
 * Keeps the `k` highest-scoring items seen (a bounded min-heap): O(n log k) instead of sorting
 * every candidate, which matters when a common query term touches most of 100k chunks.
 * Ties keep the lower slot (the earlier-indexed chunk), so results are deterministic.
 * The heap lives in two typed arrays: pushing allocates nothing.
 * @internal
 */
export class TopK {
  readonly #k: number;
  #size = 0;
  // Float64 holds any slot exactly (vector labels are not limited to 32 bits).
  #slots: Float64Array;
  #scores: Float64Array;

  constructor(k: number) {
    this.#k = Math.max(0, Math.floor(k));
    // A huge k (a caller asking for everything) grows on demand instead of up front.
    const capacity = Math.min(this.#k, 64);
    this.#slots = new Float64Array(capacity);
    this.#scores = new Float64Array(capacity);
  }

  /** The lowest score that would still enter, or -Infinity while the heap is not full. */
  get threshold(): number {
    if (this.#size < this.#k) return -Infinity;
    return this.#k === 0 ? Infinity : this.#scores[0]!;
  }

  push(slot: number, score: number): void {
    if (this.#size < this.#k) {
      if (this.#size === this.#slots.length) this.#grow();
      this.#siftUp(this.#size++, slot, score);
    } else if (this.#k > 0 && worse(this.#scores[0]!, this.#slots[0]!, score, slot)) {
      this.#siftDown(slot, score);
    }
  }

  /** The kept items, best first. */
  sorted(): Scored[] {
    const items: Scored[] = [];
    for (let i = 0; i < this.#size; i++)
      items.push({ slot: this.#slots[i]!, score: this.#scores[i]! });
    return items.sort((a, b) => b.score - a.score || a.slot - b.slot);
  }

  #grow(): void {
    const capacity = Math.min(this.#k, Math.max(64, this.#slots.length * 2));
    const slots = new Float64Array(capacity);
    const scores = new Float64Array(capacity);
    slots.set(this.#slots);
    scores.set(this.#scores);
    this.#slots = slots;
    this.#scores = scores;
  }

  /** Place (slot, score) at `index` and move it up while it beats its parent. */
  #siftUp(index: number, slot: number, score: number): void {
    const slots = this.#slots;
    const scores = this.#scores;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!worse(score, slot, scores[parent]!, slots[parent]!)) break;
      slots[index] = slots[parent]!;
      scores[index] = scores[parent]!;
      index = parent;
    }
    slots[index] = slot;
    scores[index] = score;
  }

  /** Replace the root (the worst item) with (slot, score) and restore the heap. */
  #siftDown(slot: number, score: number): void {
    const slots = this.#slots;
    const scores = this.#scores;
    const size = this.#size;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= size) break;
      const right = left + 1;
      let child = left;
      if (right < size && worse(scores[right]!, slots[right]!, scores[left]!, slots[left]!))
        child = right;
      if (!worse(scores[child]!, slots[child]!, score, slot)) break;
      slots[index] = slots[child]!;
      scores[index] = scores[child]!;
      index = child;
    }
    slots[index] = slot;
    scores[index] = score;
  }
}

/** True when item a ranks below item b (lower score, or equal score and a later slot). */
function worse(aScore: number, aSlot: number, bScore: number, bSlot: number): boolean {
  return aScore < bScore || (aScore === bScore && aSlot > bSlot);
}
