/**
 * JSON with object keys sorted at every depth, so two argument objects that differ only in key
 * order give the same text. `undefined` members are dropped (as JSON.stringify does), BigInts
 * are written as strings, and a cycle is written as `"[Circular]"` instead of throwing.
 *
 * @param value - any value
 * @returns a stable JSON text
 * @example
 * ```ts
 * canonicalJson({ b: 1, a: [2, { d: 3, c: 4 }] }); // '{"a":[2,{"c":4,"d":3}],"b":1}'
 * ```
 */
export function canonicalJson(value: unknown): string {
  return write(value, new Set()) ?? 'null';
}

function write(value: unknown, ancestors: Set<object>): string | undefined {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return JSON.stringify(value.toString());
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  if (value === null) return 'null';
  const object = value as object;
  if (ancestors.has(object)) return '"[Circular]"';
  if (typeof (object as { toJSON?: unknown }).toJSON === 'function') {
    return write((object as { toJSON(): unknown }).toJSON(), ancestors);
  }
  ancestors.add(object);
  let out: string;
  if (Array.isArray(object)) {
    out = `[${object.map((item) => write(item, ancestors) ?? 'null').join(',')}]`;
  } else {
    const record = object as Record<string, unknown>;
    const parts: string[] = [];
    for (const key of Object.keys(record).sort()) {
      const item = write(record[key], ancestors);
      if (item !== undefined) parts.push(`${JSON.stringify(key)}:${item}`);
    }
    out = `{${parts.join(',')}}`;
  }
  ancestors.delete(object);
  return out;
}
