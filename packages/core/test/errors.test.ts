import { describe, expect, it } from '@jest/globals';
import {
  ConfigurationError,
  ErrorCodes,
  ModelServiceError,
  QuiverError,
  ToolAbortedError,
  ToolArgumentError,
  ToolExecutionError,
  ToolNotFoundError,
  ToolRegistrationError,
  ToolTimeoutError,
  errorMessage,
} from '../src/index.js';

describe('errors', () => {
  it('every error has its stable code, its class name, and is a QuiverError and an Error', () => {
    const errors: [QuiverError, string][] = [
      [new ToolNotFoundError('x'), ErrorCodes.toolNotFound],
      [new ToolArgumentError('x', []), ErrorCodes.toolArgument],
      [new ToolTimeoutError('x', 10), ErrorCodes.toolTimeout],
      [new ToolExecutionError('x', 'failed'), ErrorCodes.toolExecution],
      [new ToolAbortedError('x'), ErrorCodes.toolAborted],
      [new ToolRegistrationError('x', 'bad'), ErrorCodes.toolRegistration],
      [new ModelServiceError('down'), ErrorCodes.modelService],
      [new ConfigurationError('set X'), ErrorCodes.configuration],
    ];
    for (const [error, code] of errors) {
      expect(error.code).toBe(code);
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe(error.constructor.name);
      expect(QuiverError.isInstance(error)).toBe(true);
      expect(JSON.parse(JSON.stringify(error))).toMatchObject({
        name: error.name,
        code,
        message: error.message,
      });
    }
  });

  it('every tool error names its tool in toJSON', () => {
    for (const error of [
      new ToolNotFoundError('t'),
      new ToolArgumentError('t', []),
      new ToolTimeoutError('t', 1),
      new ToolExecutionError('t', 'm'),
      new ToolAbortedError('t'),
    ]) {
      expect(error.toJSON().toolName).toBe('t');
    }
  });

  it('isInstance recognises errors of another copy of the package (by the global symbol) and nothing else', () => {
    const foreign = {
      [Symbol.for('quiver.error')]: true,
      code: 'tool_timeout',
      message: 'from another copy',
    };
    expect(QuiverError.isInstance(foreign)).toBe(true);
    expect(QuiverError.isInstance(new Error('plain'))).toBe(false);
    expect(QuiverError.isInstance(null)).toBe(false);
    expect(QuiverError.isInstance('tool_timeout')).toBe(false);
  });

  it('keeps the cause', () => {
    const cause = new Error('root');
    expect(new ToolExecutionError('t', 'm', { cause }).cause).toBe(cause);
  });

  it('ToolNotFoundError lists the available tools, or uses the given reason', () => {
    const error = new ToolNotFoundError('serch', ['search', 'fetch']);
    expect(error.message).toBe('Tool "serch" does not exist. Available tools: search, fetch.');
    expect(error.toJSON()).toMatchObject({ toolName: 'serch' });
    expect(new ToolNotFoundError('x', [], { reason: 'Group off.' }).message).toBe('Group off.');
  });

  it('ToolArgumentError lists each issue with its path', () => {
    const error = new ToolArgumentError('book', [
      { path: ['dates', 0], message: 'must be a date' },
      { path: [], message: 'must be an object' },
    ]);
    expect(error.message.split('\n')).toEqual([
      'Invalid arguments for tool "book".',
      '- "dates.0": must be a date',
      '- arguments: must be an object',
    ]);
    expect(error.toJSON().issues).toEqual(error.issues);
    expect(new ToolArgumentError('b', [], { summary: 'Custom.' }).message).toBe('Custom.');
  });

  it('ToolTimeoutError says how long and what to do', () => {
    const error = new ToolTimeoutError('slow', 1500);
    expect(error.message).toMatch(/within 1500 ms.*raise the tool's timeout/);
    expect(error.toJSON()).toMatchObject({ toolName: 'slow', timeoutMs: 1500 });
  });

  it('ToolExecutionError carries isRetryable, retryAfterMs and an optional custom code', () => {
    const error = new ToolExecutionError('fetch', '503', {
      isRetryable: true,
      retryAfterMs: 500,
      code: 'upstream_unavailable',
    });
    expect(error.toJSON()).toEqual({
      name: 'ToolExecutionError',
      code: 'upstream_unavailable',
      message: '503',
      toolName: 'fetch',
      isRetryable: true,
      retryAfterMs: 500,
    });
    expect(new ToolExecutionError('f', 'm').toJSON()).not.toHaveProperty('retryAfterMs');
    expect(new ToolExecutionError('f', 'm').isRetryable).toBe(false);
  });

  it.each([
    [undefined, true],
    [408, true],
    [429, true],
    [500, true],
    [503, true],
    [400, false],
    [401, false],
    [404, false],
  ])('ModelServiceError with status %p is retryable: %p', (statusCode, retryable) => {
    const error = new ModelServiceError('failed', statusCode === undefined ? {} : { statusCode });
    expect(error.isRetryable).toBe(retryable);
    expect(error.toJSON()).toMatchObject({ statusCode, isRetryable: retryable });
  });

  it('ModelServiceError honours an explicit isRetryable and keeps the body', () => {
    const error = new ModelServiceError('x', {
      statusCode: 500,
      isRetryable: false,
      body: { error: 'quota' },
    });
    expect(error.isRetryable).toBe(false);
    expect(error.body).toEqual({ error: 'quota' });
  });

  it('errorMessage turns anything into a string without throwing', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(errorMessage(new Error('e'))).toBe('e');
    expect(errorMessage('s')).toBe('s');
    expect(errorMessage({ a: 1 })).toBe('{"a":1}');
    expect(errorMessage(undefined)).toBe('undefined');
    expect(errorMessage(cyclic)).toBe('[object Object]');
    expect(errorMessage(10n)).toBe('10');
  });
});

describe('errorMessage across realms', () => {
  it('reads the message of an error made in another realm', async () => {
    const { runInNewContext } = await import('node:vm');
    const foreign = runInNewContext('new TypeError("from elsewhere")') as unknown;
    expect(foreign instanceof Error).toBe(false);
    expect(errorMessage(foreign)).toBe('from elsewhere');
  });
});
