import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { ConfigurationError, responseText } from '@quiver/core';
import { Toolkit, createStorageTool } from '../src/index.js';

function setup(options: { maxValueBytes?: number } = {}) {
  const base = mkdtempSync(join(tmpdir(), 'quiver-storage-'));
  const root = join(base, 'store');
  const toolkit = new Toolkit();
  toolkit.register(createStorageTool({ root, ...options }));
  let id = 0;
  const call = (args: Record<string, unknown>) =>
    toolkit.callToCompletion({ id: `s${++id}`, name: 'storage', arguments: JSON.stringify(args) });
  return { base, root, call };
}

describe('storage tool', () => {
  it('puts, gets, scans by prefix and deletes', async () => {
    const { call } = setup();
    await call({ operation: 'put', key: 'notes/a', value: 'alpha' });
    await call({ operation: 'put', key: 'notes/b', value: 'beta' });
    await call({ operation: 'put', key: 'other', value: 'gamma' });
    expect(responseText(await call({ operation: 'get', key: 'notes/a' }))).toBe('alpha');
    const scan = await call({ operation: 'scan', prefix: 'notes/' });
    const value = (scan.content[0] as { value: { entries: { key: string; value: string }[] } })
      .value;
    expect(value.entries).toEqual([
      { key: 'notes/a', value: 'alpha' },
      { key: 'notes/b', value: 'beta' },
    ]);
    await call({ operation: 'delete', key: 'notes/a' });
    const missing = await call({ operation: 'get', key: 'notes/a' });
    expect(missing.isError).toBe(true);
    expect(missing.metadata?.error?.code).toBe('key_not_found');
  });

  it('keeps namespaces apart', async () => {
    const { call } = setup();
    await call({ operation: 'put', key: 'k', value: 'one', namespace: 'alice' });
    await call({ operation: 'put', key: 'k', value: 'two', namespace: 'bob' });
    expect(responseText(await call({ operation: 'get', key: 'k', namespace: 'alice' }))).toBe(
      'one',
    );
    expect(responseText(await call({ operation: 'get', key: 'k', namespace: 'bob' }))).toBe('two');
  });

  it('never writes or reads outside the root, whatever the key', async () => {
    const { base, root, call } = setup();
    const outside = join(base, 'secret.txt');
    writeFileSync(outside, 'top secret');
    for (const key of [
      '../secret.txt',
      '../../etc/passwd',
      '/etc/passwd',
      '..',
      '.',
      'a/../../secret.txt',
      'C:\\\\windows',
    ]) {
      const put = await call({ operation: 'put', key, value: 'x' });
      expect(put.isError).toBeUndefined();
      expect(responseText(await call({ operation: 'get', key }))).toBe('x');
    }
    for (const namespace of ['..', '../..', '/tmp']) {
      await call({ operation: 'put', key: 'k', value: 'y', namespace });
    }
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(outside, 'utf8')).toBe('top secret');
    // Everything landed inside the root: one folder per namespace, one file per key.
    expect(readdirSync(base).sort()).toEqual(['secret.txt', 'store']);
    expect(existsSync(join(root, 'default'))).toBe(true);
    const keys = await call({ operation: 'scan' });
    expect((keys.content[0] as { value: { count: number } }).value.count).toBe(7);
  });

  it('refuses values over the limit, empty keys, and missing fields', async () => {
    const { call } = setup({ maxValueBytes: 10 });
    const big = await call({ operation: 'put', key: 'k', value: 'x'.repeat(11) });
    expect(big.metadata?.error?.code).toBe('value_too_large');
    expect((await call({ operation: 'put', key: '', value: 'x' })).metadata?.error?.code).toBe(
      'invalid_key',
    );
    expect((await call({ operation: 'put', key: 'k' })).metadata?.error?.code).toBe(
      'invalid_value',
    );
    expect((await call({ operation: 'get' })).metadata?.error?.code).toBe('invalid_key');
    expect((await call({ operation: 'explode', key: 'k' })).metadata?.error?.code).toBe(
      'tool_argument_invalid',
    );
  });

  it('leaves one whole value when writers race on one key', async () => {
    const { root, call } = setup();
    const values = Array.from(
      { length: 40 },
      (_, index) => `value-${index}-${'z'.repeat(5000 + index)}`,
    );
    await Promise.all(values.map((value) => call({ operation: 'put', key: 'contended', value })));
    const final = responseText(await call({ operation: 'get', key: 'contended' }));
    expect(values).toContain(final);
    // No temp files are left behind.
    expect(readdirSync(join(root, 'default')).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('needs a root', () => {
    expect(() => createStorageTool({ root: '' })).toThrow(ConfigurationError);
  });
});
