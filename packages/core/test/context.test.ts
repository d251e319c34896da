import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { createConsoleLogger, createToolContext, onToolAbort, silentLogger } from '../src/index.js';

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

describe('onToolAbort', () => {
  it('falls back to the signal of a context without onAbort: once, with the reason, removable', () => {
    const controller = new AbortController();
    const context = createToolContext({ signal: controller.signal });
    const heard: unknown[] = [];
    const removed: unknown[] = [];
    onToolAbort(context, (reason) => heard.push(reason));
    const remove = onToolAbort(context, (reason) => removed.push(reason));
    remove();
    controller.abort('stop');
    controller.signal.dispatchEvent(new Event('abort'));
    expect(heard).toEqual(['stop']);
    expect(removed).toEqual([]);
  });

  it('calls the listener at once for a context already aborted', () => {
    const controller = new AbortController();
    controller.abort('late');
    const heard: unknown[] = [];
    onToolAbort(createToolContext({ signal: controller.signal }), (reason) => heard.push(reason));
    expect(heard).toEqual(['late']);
  });

  it("uses the context's own onAbort when it has one, without reading its signal", () => {
    const listeners: ((reason: unknown) => void)[] = [];
    const context = {
      get signal(): AbortSignal {
        throw new Error('the signal was read');
      },
      onAbort(listener: (reason: unknown) => void) {
        listeners.push(listener);
        return () => listeners.splice(listeners.indexOf(listener), 1);
      },
    };
    const heard: unknown[] = [];
    const remove = onToolAbort(context, (reason) => heard.push(reason));
    expect(listeners).toHaveLength(1);
    listeners[0]!('why');
    remove();
    expect(listeners).toHaveLength(0);
    expect(heard).toEqual(['why']);
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
