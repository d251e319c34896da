/** One scored item. @internal */
export interface Scored {
  slot: number;
  score: number;
}

/**
 * Keeps the `k` highest-scoring items seen (a bounded min-heap): O(n log k) instead of sorting
 * every candidate, which matters when a common query term touches most of 100k chunks.
 * Ties keep the lower slot (the earlier-indexed chunk), so results are deterministic.
 * @internal
 */
export class TopK {
  readonly #k: number;
  readonly #heap: Scored[] = [];

  constructor(k: number) {
    this.#k = Math.max(0, Math.floor(k));
  }

  /** The lowest score that would still enter, or -Infinity while the heap is not full. */
  get threshold(): number {
    return this.#heap.length < this.#k ? -Infinity : this.#heap[0]!.score;
  }

  push(slot: number, score: number): void {
    if (this.#k === 0) return;
    const heap = this.#heap;
    if (heap.length < this.#k) {
      heap.push({ slot, score });
      this.#siftUp(heap.length - 1);
    } else if (worse(heap[0]!, { slot, score })) {
      heap[0] = { slot, score };
      this.#siftDown(0);
    }
  }

  /** The kept items, best first. */
  sorted(): Scored[] {
    return [...this.#heap].sort((a, b) => b.score - a.score || a.slot - b.slot);
  }

  #siftUp(index: number): void {
    const heap = this.#heap;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!worse(heap[index]!, heap[parent]!)) break;
      [heap[index], heap[parent]] = [heap[parent]!, heap[index]!];
      index = parent;
    }
  }

  #siftDown(index: number): void {
    const heap = this.#heap;
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let smallest = index;
      if (left < heap.length && worse(heap[left]!, heap[smallest]!)) smallest = left;
      if (right < heap.length && worse(heap[right]!, heap[smallest]!)) smallest = right;
      if (smallest === index) return;
      [heap[index], heap[smallest]] = [heap[smallest]!, heap[index]!];
      index = smallest;
    }
  }
}

/** True when `a` ranks below `b` (lower score, or equal score and a later slot). */
function worse(a: Scored, b: Scored): boolean {
  return a.score < b.score || (a.score === b.score && a.slot > b.slot);
}
