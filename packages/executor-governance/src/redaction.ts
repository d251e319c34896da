/** Options of {@link redactSecrets}. */
export interface RedactionOptions {
  /** Keys whose values are hidden (a string matches case-insensitively, ignoring `_` and `-`). */
  keys?: (string | RegExp)[];
  /** Values (strings) that are hidden wherever they appear, e.g. API key formats. */
  valuePatterns?: RegExp[];
  /** The replacement. Default `[REDACTED]`. */
  replacement?: string;
}

/** Keys whose values are hidden by default. */
export const DEFAULT_SECRET_KEYS: readonly RegExp[] = Object.freeze([
  /^(api_?key|apikey|x_?api_?key)$/i,
  // `_token` but not token counts such as `max_tokens`.
  /(^|_)(token|secret|secrets|password|passwd|pwd|passphrase)$/i,
  /^(authorization|auth|cookie|set_cookie|session_?id|credentials?)$/i,
  /(private|access|secret)_?key$/i,
  /^client_?secret$/i,
]);

/** Secret formats hidden wherever they appear as a string value. */
export const DEFAULT_SECRET_VALUE_PATTERNS: readonly RegExp[] = Object.freeze([
  /\bsk-[A-Za-z0-9_-]{16,}/g, // OpenAI-style keys
  /\bBearer\s+[A-Za-z0-9._~+/-]{16,}=*/g,
  /\bgh[pousr]_[A-Za-z0-9]{30,}/g, // GitHub tokens
  /\bAKIA[0-9A-Z]{16}\b/g, // AWS access key ids
  /\bxox[baprs]-[A-Za-z0-9-]{10,}/g, // Slack tokens
]);

/**
 * A deep copy of `value` with secrets hidden: values under secret-looking keys (`api_key`,
 * `token`, `password`, `authorization` …) and strings that look like keys (`sk-…`, `Bearer …`).
 *
 * @param value - arguments or any JSON-like value
 * @param options - extra keys and patterns
 * @returns the redacted copy
 * @example
 * ```ts
 * redactSecrets({ query: 'x', api_key: 'k' }); // { query: 'x', api_key: '[REDACTED]' }
 * ```
 */
export function redactSecrets(value: unknown, options: RedactionOptions = {}): unknown {
  return createRedactor(options)(value);
}

/**
 * Compile redaction settings once into a function (what {@link redactSecrets} does per call).
 * @param options - extra keys and patterns
 * @returns a function returning a redacted deep copy of its argument
 */
export function createRedactor(options: RedactionOptions = {}): (value: unknown) => unknown {
  const replacement = options.replacement ?? '[REDACTED]';
  const keyTests = [...DEFAULT_SECRET_KEYS, ...(options.keys ?? [])].map((key) =>
    typeof key === 'string'
      ? (name: string) => squash(name) === squash(key)
      : (name: string) => key.test(name.replace(/-/g, '_')),
  );
  const patterns = [...DEFAULT_SECRET_VALUE_PATTERNS, ...(options.valuePatterns ?? [])].map(
    (pattern) => (pattern.global ? pattern : new RegExp(pattern.source, `${pattern.flags}g`)),
  );
  return (value: unknown) => {
    const seen = new WeakSet<object>();
    const walk = (node: unknown): unknown => {
      if (typeof node === 'string') {
        let out = node;
        for (const pattern of patterns) {
          pattern.lastIndex = 0;
          if (pattern.test(out)) {
            pattern.lastIndex = 0;
            out = out.replace(pattern, replacement);
          }
        }
        return out;
      }
      if (typeof node !== 'object' || node === null) return node;
      if (seen.has(node)) return '[Circular]';
      seen.add(node);
      if (Array.isArray(node)) return node.map(walk);
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(node)) {
        out[key] =
          item !== null && item !== undefined && keyTests.some((test) => test(key))
            ? replacement
            : walk(item);
      }
      return out;
    };
    return walk(value);
  };
}

function squash(name: string): string {
  return name.toLowerCase().replace(/[_-]/g, '');
}
