import { describe, expect, it } from '@jest/globals';
import { createToolContext } from '@quiver/core';
import type { ToolContext } from '@quiver/core';
import { RequestSignal } from '../src/request-signal.js';

/** A context whose onAbort the test drives, as the toolkit's does. */
function drivenContext(): {
  context: ToolContext;
  abort: (reason: unknown) => void;
  count: () => number;
} {
  const listeners = new Set<(reason: unknown) => void>();
  const context = createToolContext();
  context.onAbort = (listener) => {
    listeners.add(listener);
    return () => listeners.delete(listener);
  };
  return {
    context,
    abort: (reason) => {
      for (const listener of [...listeners]) listener(reason);
    },
    count: () => listeners.size,
  };
}

describe('RequestSignal', () => {
  it("follows the call's cancellation: aborted, reason, throwIfAborted, listeners with an abort event", () => {
    const { context, abort } = drivenContext();
    const signal = RequestSignal.forContext(context);
    const events: string[] = [];
    signal.addEventListener('abort', (event) => events.push(`fn:${event.type}`));
    signal.addEventListener('abort', {
      handleEvent: (event) => events.push(`object:${event.type}`),
    });
    signal.onabort = (event) => events.push(`onabort:${event.type}`);
    expect(() => signal.throwIfAborted()).not.toThrow();
    const reason = new Error('stop');
    abort(reason);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(reason);
    expect(() => signal.throwIfAborted()).toThrow(reason);
    expect(events).toEqual(['onabort:abort', 'fn:abort', 'object:abort']);
    abort(new Error('again'));
    expect(signal.reason).toBe(reason);
    expect(events).toHaveLength(3);
  });

  it('removes listeners, ignores other event types and duplicates, and calls once-listeners once', () => {
    const signal = new RequestSignal();
    const heard: string[] = [];
    const removed = () => heard.push('removed');
    const twice = () => heard.push('twice');
    signal.addEventListener('abort', removed);
    signal.removeEventListener('abort', removed);
    signal.addEventListener('abort', twice);
    signal.addEventListener('abort', twice);
    signal.addEventListener('other', () => heard.push('other'));
    signal.addEventListener('abort', () => heard.push('once'), { once: true });
    signal.dispatchEvent(new Event('abort'));
    signal.dispatchEvent(new Event('abort'));
    expect(heard).toEqual(['twice', 'once', 'twice']);
  });

  it('stops following the call once detached (the request settled)', () => {
    const { context, abort, count } = drivenContext();
    const signal = RequestSignal.forContext(context);
    expect(count()).toBe(1);
    signal.detach();
    expect(count()).toBe(0);
    abort(new Error('late'));
    expect(signal.aborted).toBe(false);
  });

  it("falls back to the context's AbortSignal when the context has no onAbort", () => {
    const controller = new AbortController();
    const signal = RequestSignal.forContext(createToolContext({ signal: controller.signal }));
    controller.abort('gone');
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe('gone');
    const already = RequestSignal.forContext(createToolContext({ signal: controller.signal }));
    expect(already.aborted).toBe(true);
  });

  it('aborts with an AbortError by default', () => {
    const signal = new RequestSignal();
    signal.abort();
    expect(signal.reason).toBeInstanceOf(DOMException);
    expect((signal.reason as DOMException).name).toBe('AbortError');
  });
});
