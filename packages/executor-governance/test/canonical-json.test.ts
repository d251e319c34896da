import { describe, expect, it } from '@jest/globals';
import { canonicalJson } from '../src/index.js';

describe('canonicalJson', () => {
  it('sorts keys at every depth and is stable', () => {
    expect(canonicalJson({ b: 1, a: [2, { d: 3, c: 4 }] })).toBe('{"a":[2,{"c":4,"d":3}],"b":1}');
    expect(canonicalJson({ x: 1, y: 2 })).toBe(canonicalJson({ y: 2, x: 1 }));
  });

  it('never throws: cycles, BigInt, undefined, non-finite numbers', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(canonicalJson(cyclic)).toBe('{"a":1,"self":"[Circular]"}');
    expect(canonicalJson({ n: 10n, u: undefined, inf: Infinity, list: [undefined] })).toBe(
      '{"inf":null,"list":[null],"n":"10"}',
    );
    expect(canonicalJson(undefined)).toBe('null');
  });
});
