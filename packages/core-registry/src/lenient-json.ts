import JSON5 from 'json5';
import { jsonrepair } from 'jsonrepair';

/** The outcome of {@link parseToolArguments}. */
export type ParsedArguments =
  { ok: true; value: Record<string, unknown>; repaired: boolean } | { ok: false; message: string };

const FENCE = /^```[\w-]*\s*\n?([\s\S]*?)\n?\s*```$/;

/**
 * Parse the arguments string a model produced, leniently, into an object.
 *
 * Tries, in order: strict JSON; the same without a Markdown code fence; JSON5 (single quotes,
 * trailing commas, comments, unquoted keys); then a repair pass (Python literals
 * `True`/`False`/`None`, missing closing brackets, missing commas). An empty string is `{}`.
 *
 * It refuses to guess where the text is cut inside a string literal (`{"path": "/tmp/rep`):
 * closing that string would invent a value the model never finished.
 *
 * @param raw - the `arguments` string of a tool call
 * @returns the object, or a message saying why it could not be read
 */
export function parseToolArguments(raw: string): ParsedArguments {
  // Strict JSON first, inline: nearly every call's arguments are (this runs on every call).
  let strict: unknown;
  let parsed = true;
  try {
    strict = JSON.parse(raw);
  } catch {
    parsed = false;
  }
  if (parsed) return asObject(strict, false);

  let text = raw.trim();
  if (text === '') return { ok: true, value: {}, repaired: text !== raw };
  const fenced = FENCE.exec(text);
  if (fenced) text = (fenced[1] ?? '').trim();

  for (const parse of [JSON.parse, JSON5.parse]) {
    const attempt = tryParse(parse, text);
    if (attempt.ok) return asObject(attempt.value, true);
  }
  if (endsInsideString(text)) {
    return {
      ok: false,
      message:
        'The arguments are cut off inside a string value, so the intended value is unknown. Send the complete JSON object again.',
    };
  }
  try {
    const repaired = JSON.parse(jsonrepair(text)) as unknown;
    // The repair reads prose with commas ("Berlin, in celsius") as a list: only an array the
    // model actually wrote is "an array"; anything else it could not read is "not JSON".
    if (
      typeof repaired !== 'object' ||
      repaired === null ||
      (Array.isArray(repaired) && !text.startsWith('['))
    ) {
      const preview = text.length > 40 ? `${text.slice(0, 40)}…` : text;
      return {
        ok: false,
        message: `The arguments are not JSON: ${JSON.stringify(preview)}. Send a single JSON object.`,
      };
    }
    return asObject(repaired, true);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return {
      ok: false,
      message: `The arguments are not valid JSON (${detail}). Send a single JSON object.`,
    };
  }
}

function tryParse(
  parse: (text: string) => unknown,
  text: string,
): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: parse(text) };
  } catch {
    return { ok: false };
  }
}

function asObject(value: unknown, repaired: boolean): ParsedArguments {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return { ok: true, value: value as Record<string, unknown>, repaired };
  }
  // Some models double-encode: the arguments are a JSON string holding the JSON object.
  if (typeof value === 'string') {
    const inner = tryParse(JSON.parse, value);
    if (
      inner.ok &&
      typeof inner.value === 'object' &&
      inner.value !== null &&
      !Array.isArray(inner.value)
    ) {
      return { ok: true, value: inner.value as Record<string, unknown>, repaired: true };
    }
  }
  const kind = Array.isArray(value) ? 'an array' : value === null ? 'null' : `a ${typeof value}`;
  return {
    ok: false,
    message: `The arguments must be a JSON object with named fields, but they are ${kind}.`,
  };
}

/** True when `text` ends inside an unterminated string literal (double- or single-quoted). */
function endsInsideString(text: string): boolean {
  let quote: string | undefined;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (quote !== undefined) {
      if (char === '\\') index++;
      else if (char === quote) quote = undefined;
    } else if (char === '"' || char === "'") {
      // A single quote inside a word (don't) is an apostrophe, not a string start.
      const previous = text[index - 1];
      if (char === "'" && previous !== undefined && /[A-Za-z0-9]/.test(previous)) continue;
      quote = char;
    }
  }
  return quote !== undefined;
}
