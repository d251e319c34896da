import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { ToolExecutionError } from '@quiver/core';
import { Toolkit, defineTool } from '@quiver/core-registry';
import { z } from 'zod';
import type { CallLogSink, CallRecord } from '../src/index.js';
import {
  argumentRepair,
  callLog,
  jsonlFileSink,
  memorySink,
  openTelemetrySink,
  redactSecrets,
} from '../src/index.js';
import { FakeClock, call, recordingLogger, waitFor } from './helpers.js';

const directory = mkdtempSync(join(tmpdir(), 'governance-log-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function makeToolkit() {
  const toolkit = new Toolkit();
  toolkit.register(
    defineTool({
      name: 'web_search',
      description: 'Search',
      parameters: z.object({ query: z.string(), api_key: z.string().optional() }),
      execute: ({ query }) => {
        if (query === 'fail')
          throw new ToolExecutionError('web_search', 'upstream 502', { isRetryable: true });
        return `results for ${query}`;
      },
    }),
  );
  return toolkit;
}

describe('redactSecrets', () => {
  it('hides secret keys and secret-looking values, deeply, without mutating', () => {
    const input = {
      query: 'x',
      api_key: 'abc',
      headers: { Authorization: 'Bearer abcdefghijklmnopqrstuvwxyz', 'X-Trace': 'ok' },
      nested: [{ password: 'p' }, { access_token: 't' }],
      note: 'my key is sk-proj-abcdefghijklmnopqrstuv',
      max_tokens: 100,
    };
    expect(redactSecrets(input)).toEqual({
      query: 'x',
      api_key: '[REDACTED]',
      headers: { Authorization: '[REDACTED]', 'X-Trace': 'ok' },
      nested: [{ password: '[REDACTED]' }, { access_token: '[REDACTED]' }],
      note: 'my key is [REDACTED]',
      max_tokens: 100,
    });
    expect(input.api_key).toBe('abc');
    expect(redactSecrets({ account_pin: '1234' }, { keys: ['account-pin'] })).toEqual({
      account_pin: '[REDACTED]',
    });
  });
});

describe('callLog', () => {
  it('writes one structured record per call, with redacted and repaired arguments', async () => {
    const toolkit = makeToolkit();
    const memory = memorySink();
    const clock = new FakeClock();
    toolkit.use(callLog({ sinks: [memory], clock }));
    toolkit.use(argumentRepair());
    await call(
      toolkit,
      'web_search',
      { q: 'quiver', api_key: 'secret-value' },
      { namespace: 'main' },
    );
    await call(toolkit, 'web_search', { query: 'fail' });
    await call(toolkit, 'missing_tool', '{"path": "/tmp/unfinished');
    const [ok, failed, unknown] = memory.records as [CallRecord, CallRecord, CallRecord];
    expect(ok).toMatchObject({
      tool: 'web_search',
      namespace: 'main',
      outcome: 'ok',
      arguments: { q: 'quiver', api_key: '[REDACTED]' },
      repairedArguments: { query: 'quiver', api_key: '[REDACTED]' },
      repairs: [expect.objectContaining({ kind: 'rename', from: 'q' })],
      retries: 0,
    });
    expect(ok.callId).toMatch(/^call_/);
    expect(ok.bytes).toBeGreaterThan('results for quiver'.length);
    expect(Number.isNaN(Date.parse(ok.startedAt))).toBe(false);
    expect(ok.durationMs).toBe(0); // the fake clock did not move
    expect(JSON.stringify(memory.records)).not.toContain('secret-value');
    expect(failed).toMatchObject({
      outcome: 'error',
      errorCode: 'tool_execution_failed',
      errorMessage: 'upstream 502',
    });
    expect(unknown).toMatchObject({
      outcome: 'error',
      errorCode: 'tool_not_found',
      arguments: '{"path": "/tmp/unfinished',
    });
  });

  it('a sink that throws or rejects is logged and ignored; other sinks still get the record', async () => {
    const toolkit = makeToolkit();
    const logger = recordingLogger();
    const memory = memorySink();
    const throwing: CallLogSink = {
      write: () => {
        throw new Error('disk full');
      },
    };
    const rejecting: CallLogSink = {
      write: async () => {
        throw new Error('network down');
      },
    };
    toolkit.use(callLog({ sinks: [throwing, rejecting, memory], logger }));
    const response = await call(toolkit, 'web_search', { query: 'a' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(response.isError).toBeUndefined();
    expect(memory.records).toHaveLength(1);
    expect(logger.entries.map((entry) => entry.fields?.error)).toEqual([
      'disk full',
      'network down',
    ]);
  });

  it('memorySink keeps the newest maxRecords', async () => {
    const toolkit = makeToolkit();
    const memory = memorySink({ maxRecords: 2 });
    toolkit.use(callLog({ sinks: [memory] }));
    for (const query of ['a', 'b', 'c']) await call(toolkit, 'web_search', { query });
    expect(memory.records.map((record) => (record.arguments as { query: string }).query)).toEqual([
      'b',
      'c',
    ]);
  });

  it('jsonlFileSink appends one JSON line per call', async () => {
    const toolkit = makeToolkit();
    const path = join(directory, 'calls.jsonl');
    const log = callLog({ sinks: [jsonlFileSink({ path })] });
    toolkit.use(log);
    await call(toolkit, 'web_search', { query: 'a', api_key: 'k' });
    await call(toolkit, 'web_search', { query: 'b' });
    await log.close();
    const lines = readFileSync(path, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as CallRecord);
    expect(lines.map((line) => line.arguments)).toEqual([
      { query: 'a', api_key: '[REDACTED]' },
      { query: 'b' },
    ]);
  });

  it('jsonlFileSink reports a file it cannot write (and the call still succeeds)', async () => {
    const toolkit = makeToolkit();
    const logger = recordingLogger();
    const log = callLog({
      sinks: [jsonlFileSink({ path: join(directory, 'missing', 'dir', 'calls.jsonl') })],
      logger,
    });
    toolkit.use(log);
    // The stream reports the missing directory asynchronously; the next write after that
    // throws, which the call log reports. Keep calling until it has.
    const failed = () =>
      logger.entries.some((entry) => String(entry.fields?.error).includes('ENOENT'));
    const outcomes: (boolean | undefined)[] = [];
    for (let attempt = 0; attempt < 200 && !failed(); attempt++) {
      outcomes.push((await call(toolkit, 'web_search', { query: `q${attempt}` })).isError);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(failed()).toBe(true);
    expect(outcomes.every((isError) => isError === undefined)).toBe(true);
    await log.close();
  });

  it('openTelemetrySink emits one span per call with GenAI attributes', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    const toolkit = makeToolkit();
    toolkit.use(callLog({ sinks: [openTelemetrySink({ tracer: provider.getTracer('test') })] }));
    await call(toolkit, 'web_search', { query: 'a' });
    await call(toolkit, 'web_search', { query: 'fail' });
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => span.name)).toEqual([
      'execute_tool web_search',
      'execute_tool web_search',
    ]);
    expect(spans[0]!.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'web_search',
      'quiver.outcome': 'ok',
    });
    expect(spans[1]!.status).toEqual({ code: 2, message: 'upstream 502' });
    expect(spans[1]!.attributes['error.type']).toBe('tool_execution_failed');
    await provider.shutdown();
  });

  it('openTelemetrySink without a tracer uses the global one from @opentelemetry/api', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    trace.setGlobalTracerProvider(provider);
    try {
      const toolkit = makeToolkit();
      toolkit.use(callLog({ sinks: [openTelemetrySink()] }));
      await call(toolkit, 'web_search', { query: 'a' });
      // The first write loads @opentelemetry/api asynchronously.
      await waitFor(() => exporter.getFinishedSpans().length > 0);
      expect(exporter.getFinishedSpans().map((span) => span.instrumentationScope.name)).toEqual([
        '@quiver/executor-governance',
      ]);
    } finally {
      trace.disable();
      await provider.shutdown();
    }
  });
});
