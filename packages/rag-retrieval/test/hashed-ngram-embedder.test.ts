import { describe, expect, it } from '@jest/globals';
import { HashedNgramEmbedder } from '../src/index.js';

const cosine = (a: number[], b: number[]) => a.reduce((sum, value, i) => sum + value * b[i]!, 0);

describe('HashedNgramEmbedder', () => {
  it('gives deterministic unit vectors of the configured length', async () => {
    const embedder = new HashedNgramEmbedder({ dimensions: 256 });
    const [first, second] = await embedder.embed([
      'supersonic wing flutter',
      'supersonic wing flutter',
    ]);
    expect(first).toHaveLength(256);
    expect(first).toEqual(second);
    expect(cosine(first!, first!)).toBeCloseTo(1, 10);
  });

  it('puts inflections and shared word parts closer than unrelated text', () => {
    const embedder = new HashedNgramEmbedder();
    const query = embedder.embedOne('elasticity of heated wings');
    const related = embedder.embedOne('aeroelastic effects on a heated wing');
    const unrelated = embedder.embedOne('boundary layer transition on cones');
    expect(cosine(query, related)).toBeGreaterThan(cosine(query, unrelated) + 0.1);
  });

  it('embeds CJK text', () => {
    const embedder = new HashedNgramEmbedder();
    const query = embedder.embedOne('知识库检索');
    expect(cosine(query, embedder.embedOne('构建知识库的检索系统'))).toBeGreaterThan(
      cosine(query, embedder.embedOne('天气预报')),
    );
  });

  it('maps empty and stop-word-only text to the zero vector', () => {
    const embedder = new HashedNgramEmbedder({ dimensions: 16 });
    expect(embedder.embedOne('')).toEqual(new Array(16).fill(0));
    expect(embedder.embedOne('the of and')).toEqual(new Array(16).fill(0));
  });

  it('has an id that changes with its settings', () => {
    expect(new HashedNgramEmbedder().id).toBe(new HashedNgramEmbedder().id);
    expect(new HashedNgramEmbedder({ dimensions: 512 }).id).not.toBe(new HashedNgramEmbedder().id);
    expect(new HashedNgramEmbedder({ ngramRange: [2, 4] }).id).not.toBe(
      new HashedNgramEmbedder().id,
    );
  });

  it('rejects invalid settings and honours an aborted signal', async () => {
    expect(() => new HashedNgramEmbedder({ dimensions: 2 })).toThrow(RangeError);
    expect(() => new HashedNgramEmbedder({ ngramRange: [4, 2] })).toThrow(RangeError);
    const controller = new AbortController();
    controller.abort();
    await expect(
      new HashedNgramEmbedder().embed(['x'], { signal: controller.signal }),
    ).rejects.toThrow();
  });
});
