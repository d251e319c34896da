import { describe, expect, it } from '@jest/globals';
import { convexFusion, reciprocalRankFusion } from '../src/index.js';

describe('reciprocalRankFusion', () => {
  it('sums weight / (k + rank) over lists', () => {
    const fused = reciprocalRankFusion([{ ids: ['a', 'b'] }, { ids: ['b', 'c'], weight: 0.5 }], 60);
    expect(fused.map((entry) => entry.id)).toEqual(['b', 'a', 'c']);
    expect(fused[0]!.score).toBeCloseTo(1 / 62 + 0.5 / 61, 12);
    expect(fused[2]!.score).toBeCloseTo(0.5 / 62, 12);
  });

  it('ignores lists of weight 0', () => {
    expect(
      reciprocalRankFusion([{ ids: ['a'] }, { ids: ['b'], weight: 0 }]).map((entry) => entry.id),
    ).toEqual(['a']);
  });
});

describe('convexFusion', () => {
  it('combines min-max-normalised scores by weight', () => {
    const fused = convexFusion([
      {
        items: [
          { id: 'a', score: 10 },
          { id: 'b', score: 5 },
          { id: 'c', score: 0 },
        ],
        weight: 0.7,
      },
      {
        items: [
          { id: 'c', score: 0.9 },
          { id: 'b', score: 0.1 },
        ],
        weight: 0.3,
      },
    ]);
    const scores = Object.fromEntries(fused.map((entry) => [entry.id, entry.score]));
    expect(scores['a']).toBeCloseTo(0.7, 12);
    expect(scores['b']).toBeCloseTo(0.35, 12);
    expect(scores['c']).toBeCloseTo(0.3, 12);
    expect(fused[0]!.id).toBe('a');
  });
});
