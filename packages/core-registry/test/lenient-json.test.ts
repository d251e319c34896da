import { describe, expect, it } from '@jest/globals';
import { parseToolArguments } from '../src/index.js';

function value(raw: string): unknown {
  const parsed = parseToolArguments(raw);
  if (!parsed.ok)
    throw new Error(`expected ${JSON.stringify(raw)} to parse, got: ${parsed.message}`);
  return parsed.value;
}

function failure(raw: string): string {
  const parsed = parseToolArguments(raw);
  if (parsed.ok)
    throw new Error(`expected ${JSON.stringify(raw)} to fail, got ${JSON.stringify(parsed.value)}`);
  return parsed.message;
}

describe('parseToolArguments', () => {
  it('takes strict JSON as it is and says nothing was repaired', () => {
    expect(parseToolArguments('{"a": 1, "b": [true, null]}')).toEqual({
      ok: true,
      value: { a: 1, b: [true, null] },
      repaired: false,
    });
  });

  it('reads empty arguments (what models send for a tool without parameters) as {}', () => {
    for (const raw of ['', ' \n\t ']) expect(value(raw)).toEqual({});
  });

  it.each([
    ['a ```json code fence', '```json\n{"city": "Berlin"}\n```', { city: 'Berlin' }],
    ['a bare ``` code fence', '```\n{"city": "Berlin"}\n```', { city: 'Berlin' }],
    ['trailing commas', '{"a": [1, 2,], "b": 3,}', { a: [1, 2], b: 3 }],
    ['single quotes', "{'city': 'Berlin', 'note': 'it\\'s'}", { city: 'Berlin', note: "it's" }],
    ['unquoted keys', '{city: "Berlin"}', { city: 'Berlin' }],
    ['comments', '// the city\n{"city": /* inline */ "Berlin"}', { city: 'Berlin' }],
    ['Python literals', '{"a": True, "b": False, "c": None}', { a: true, b: false, c: null }],
    ['an unclosed object', '{"city": "Berlin", "days": 3', { city: 'Berlin', days: 3 }],
    ['an unclosed array inside an object', '{"ids": [1, 2, 3', { ids: [1, 2, 3] }],
    ['a double-encoded object', JSON.stringify(JSON.stringify({ a: 1 })), { a: 1 }],
    [
      'an apostrophe inside a word in an unclosed object',
      '{"text": "don\'t stop"',
      { text: "don't stop" },
    ],
  ])('repairs %s', (_label, raw, expected) => {
    const parsed = parseToolArguments(raw);
    expect(parsed).toEqual({ ok: true, value: expected, repaired: true });
  });

  it('refuses to guess a value cut off inside a string', () => {
    expect(failure('{"path": "/tmp/rep')).toMatch(/cut off inside a string/);
    expect(failure("{'path': '/tmp/rep")).toMatch(/cut off inside a string/);
  });

  it.each([
    ['prose', 'please search for cats', /not JSON/],
    [
      'prose with commas (which a repair would read as a list)',
      'Berlin please, in celsius',
      /not JSON/,
    ],
    ['a number', '42', /must be a JSON object.*a number/],
    ['an array', '[1, 2]', /must be a JSON object.*an array/],
    ['null', 'null', /must be a JSON object.*null/],
    ['a string', '"hello"', /must be a JSON object.*a string/],
    ['an object followed by junk', '{"a": 1} and then some', /not valid JSON|not JSON/],
  ])('rejects %s with a message the model can act on', (_label, raw, message) => {
    const text = failure(raw);
    expect(text).toMatch(message);
    expect(text).toMatch(/JSON object/);
  });

  it('keeps a long preview of junk short', () => {
    const text = failure(`x${'y'.repeat(500)}`);
    expect(text.length).toBeLessThan(200);
  });

  it('treats "__proto__" as an ordinary key and never touches Object.prototype', () => {
    for (const raw of [
      '{"__proto__": {"polluted": 1}, "a": 1}',
      "{'__proto__': {'polluted': 1}, 'a': 1,}",
      '{"__proto__": {"polluted": 1}, "a": [1',
    ]) {
      const parsed = value(raw) as Record<string, unknown>;
      expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
      expect(Object.keys(parsed)).toContain('a');
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    }
  });
});
