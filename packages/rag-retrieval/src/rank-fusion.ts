/** One ranked list to fuse: ids best first, and the list's weight. */
export interface RankedList<Id> {
  ids: readonly Id[];
  /** Weight of this list in the fusion. Default 1. */
  weight?: number;
}

/**
 * Weighted reciprocal rank fusion: score(d) = Σ weight_i / (k + rank_i(d)), ranks from 1.
 * A document missing from a list gets nothing from it. Ties keep the order of first appearance.
 *
 * @param lists - The ranked lists.
 * @param k - The RRF constant. Default 60 (Cormack et al.); the notes measured 10–200 barely mattering.
 * @returns Fused ids with their scores, best first, each id once.
 * @example
 * ```ts
 * reciprocalRankFusion([{ ids: ['a', 'b'] }, { ids: ['b', 'c'], weight: 0.5 }]); // b, a, c
 * ```
 */
export function reciprocalRankFusion<Id>(
  lists: readonly RankedList<Id>[],
  k = 60,
): { id: Id; score: number }[] {
  const scores = new Map<Id, number>();
  for (const list of lists) {
    const weight = list.weight ?? 1;
    if (weight === 0) continue;
    list.ids.forEach((id, rank) => scores.set(id, (scores.get(id) ?? 0) + weight / (k + rank + 1)));
  }
  return [...scores].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score);
}

/** One scored list to fuse by score: items best first, and the list's weight. */
export interface ScoredList<Id> {
  items: readonly { id: Id; score: number }[];
  /** Weight of this list in the fusion. Default 1. */
  weight?: number;
}

/**
 * Convex (weighted linear) fusion of min-max-normalised scores: Σ wᵢ·normᵢ(d) / Σ wᵢ. Unlike
 * RRF it keeps each list's score gaps, so one confident lexical match is rarely overturned.
 * @returns Fused ids with their scores in [0, 1], best first.
 */
export function convexFusion<Id>(lists: readonly ScoredList<Id>[]): { id: Id; score: number }[] {
  const totalWeight =
    lists.reduce((sum, list) => sum + (list.items.length > 0 ? (list.weight ?? 1) : 0), 0) || 1;
  const scores = new Map<Id, number>();
  for (const list of lists) {
    const weight = list.weight ?? 1;
    if (weight === 0 || list.items.length === 0) continue;
    let max = -Infinity;
    let min = Infinity;
    for (const item of list.items) {
      if (item.score > max) max = item.score;
      if (item.score < min) min = item.score;
    }
    const range = max - min;
    for (const item of list.items) {
      const normalised = range > 0 ? (item.score - min) / range : 1;
      scores.set(item.id, (scores.get(item.id) ?? 0) + (weight * normalised) / totalWeight);
    }
  }
  return [...scores].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score);
}
