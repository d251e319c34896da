import { describe, expect, it } from '@jest/globals';
import { TopK } from '../src/top-k.js';

describe('TopK', () => {
  it('keeps the k best, best first, ties to the lower slot', () => {
    let state = 3;
    const random = (): number => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
    for (const k of [1, 5, 64, 65, 300]) {
      // Few distinct scores, so ties are common; slots pushed in a shuffled order.
      const items = Array.from({ length: 1000 }, (_, slot) => ({
        slot,
        score: Math.floor(random() * 20),
      }));
      for (let i = items.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [items[i], items[j]] = [items[j]!, items[i]!];
      }
      const top = new TopK(k);
      for (const { slot, score } of items) top.push(slot, score);
      const expected = [...items].sort((a, b) => b.score - a.score || a.slot - b.slot).slice(0, k);
      expect(top.sorted()).toEqual(expected);
      expect(top.threshold).toBe(expected[expected.length - 1]!.score);
    }
  });

  it('reports -Infinity until full and keeps nothing for k = 0', () => {
    const top = new TopK(2);
    top.push(1, 5);
    expect(top.threshold).toBe(-Infinity);
    top.push(2, 7);
    expect(top.threshold).toBe(5);
    const none = new TopK(0);
    none.push(1, 1);
    expect(none.sorted()).toEqual([]);
    expect(none.threshold).toBe(Infinity);
  });
});
