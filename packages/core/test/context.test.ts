import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { createConsoleLogger, createToolContext, silentLogger } from '../src/index.js';

describe('createToolContext', () => {
  it('fills every field a tool may rely on', () => {
    const context = createToolContext();
    expect(context.signal).toBeInstanceOf(AbortSignal);
    expect(context.signal.aborted).toBe(false);
    expect(context.callId).toBe('');
    expect(context.files).toEqual([]);
    expect(context.state).toBeInstanceOf(Map);
    expect(context.logger).toBe(silentLogger);
    expect(Object.keys(context)).not.toContain('workDir');
  });

  it('keeps what the caller passes, and gives each context its own state', () => {
    const controller = new AbortController();
    const state = new Map([['k', 1]]);
    const context = createToolContext({
      signal: controller.signal,
      callId: 'c1',
      workDir: '/w',
      language: 'zh',
      namespace: 'sub',
      state,
    });
    expect(context).toMatchObject({
      callId: 'c1',
      workDir: '/w',
      language: 'zh',
      namespace: 'sub',
    });
    expect(context.signal).toBe(controller.signal);
    expect(context.state).toBe(state);
    expect(createToolContext().state).not.toBe(createToolContext().state);
  });
});

describe('loggers', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('the console logger writes one line per record at or above its level, with fields', () => {
    const lines: string[] = [];
    jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const logger = createConsoleLogger({ level: 'warn', prefix: 'registry' });
    logger.debug('hidden');
    logger.info('hidden');
    logger.warn('careful', { tool: 'x' });
    logger.error('broken');
    expect(lines).toEqual([
      '[registry] warn: careful {"tool":"x"}\n',
      '[registry] error: broken\n',
    ]);
  });

  it('the silent logger drops everything and cannot be changed', () => {
    const write = jest.spyOn(process.stderr, 'write');
    silentLogger.error('nothing');
    expect(write).not.toHaveBeenCalled();
    expect(Object.isFrozen(silentLogger)).toBe(true);
  });
});
