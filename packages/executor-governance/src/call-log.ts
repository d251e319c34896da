import { createWriteStream } from 'node:fs';
import type { WriteStream } from 'node:fs';
import type { Logger, ToolResponse } from '@quiver/core';
import { errorMessage, silentLogger } from '@quiver/core';
import type { ToolInvocation } from '@quiver/core-registry';
import type { Clock } from './clock.js';
import { systemClock } from './clock.js';
import type { GovernanceMiddleware } from './governance-middleware.js';
import { createGovernanceMiddleware, namespaceOf } from './governance-middleware.js';
import type { GovernanceAnnotations } from './governance-metadata.js';
import { governanceOf } from './governance-metadata.js';
import type { RedactionOptions } from './redaction.js';
import { createRedactor } from './redaction.js';
import type { ArgumentRepair } from './argument-repair.js';
import { responseBytes } from './response-size.js';
import { loadModule } from './load-module.js';
import type * as OpenTelemetry from '@opentelemetry/api';

type OpenTelemetryApi = typeof OpenTelemetry;

/** How a call ended. */
export type CallOutcome = 'ok' | 'error' | 'rollback';

/** One structured record per tool call. */
export interface CallRecord {
  callId: string;
  tool: string;
  namespace: string;
  /** ISO time the call started. */
  startedAt: string;
  durationMs: number;
  /** The arguments as the model sent them (parsed), secrets redacted; the raw text when unreadable. */
  arguments: unknown;
  /** The arguments after repair, secrets redacted (only when repaired). */
  repairedArguments?: unknown;
  repairs?: ArgumentRepair[];
  outcome: CallOutcome;
  /** `metadata.error.code` of an error response. */
  errorCode?: string;
  errorMessage?: string;
  /** Size of the result (approximate UTF-8 bytes). */
  bytes: number;
  cache?: GovernanceAnnotations['cache'];
  duplicate?: GovernanceAnnotations['duplicate'];
  rollback?: string;
  rollbackSuppressed?: string;
  retries: number;
  truncated?: GovernanceAnnotations['truncated'];
  circuit?: GovernanceAnnotations['circuit'];
  queuedMs?: number;
}

/** Where call records go. `write` may be async; a sink that throws or rejects is logged and ignored. */
export interface CallLogSink {
  write(record: CallRecord): void | Promise<void>;
  /** Finish pending writes and release resources. */
  close?(): void | Promise<void>;
}

/** Options of {@link callLog}. */
export interface CallLogOptions {
  /** Where records go. Default: one {@link memorySink}. */
  sinks?: CallLogSink[];
  /** Secret redaction settings for arguments. */
  redaction?: RedactionOptions;
  /** Where failing sinks are reported. Default: the call's logger. */
  logger?: Logger;
  clock?: Clock;
}

/** The call log middleware; see {@link callLog}. */
export interface CallLogMiddleware extends GovernanceMiddleware {
  readonly sinks: readonly CallLogSink[];
  /** Close every sink (flushing files). */
  close(): Promise<void>;
}

/**
 * Middleware that writes one {@link CallRecord} per call to its sinks: tool, redacted
 * arguments, repaired arguments, duration, outcome, bytes, and the cache / duplicate /
 * rollback / retry flags the other stages left in `metadata.governance`. Put it outermost.
 *
 * @example
 * ```ts
 * const memory = memorySink();
 * toolkit.use(callLog({ sinks: [memory, jsonlFileSink({ path: 'calls.jsonl' })] }));
 * // … later
 * memory.records.filter((record) => record.outcome === 'error');
 * ```
 */
export function callLog(options: CallLogOptions = {}): CallLogMiddleware {
  const clock = options.clock ?? systemClock;
  const sinks = options.sinks ?? [memorySink()];
  const redact = createRedactor(options.redaction);
  const report = (invocation: ToolInvocation | undefined, sink: CallLogSink, error: unknown) =>
    (options.logger ?? invocation?.context.logger ?? silentLogger).warn(
      'call log sink failed; record dropped',
      {
        sink: sink.constructor?.name,
        error: errorMessage(error),
      },
    );
  return createGovernanceMiddleware(
    'callLog',
    async (invocation, next) => {
      const startedAt = Date.now();
      const started = clock.now();
      const args = invocation.arguments;
      const raw = invocation.toolCall?.arguments;
      const response = await next(invocation);
      const record = buildRecord(invocation, response, {
        startedAt,
        durationMs: clock.now() - started,
        args: args ?? raw,
        redact,
      });
      for (const sink of sinks) {
        try {
          const written = sink.write(record);
          if (written !== undefined && typeof (written as Promise<void>).then === 'function') {
            (written as Promise<void>).catch((error: unknown) => report(invocation, sink, error));
          }
        } catch (error) {
          report(invocation, sink, error);
        }
      }
      return response;
    },
    {
      sinks,
      async close(): Promise<void> {
        for (const sink of sinks) {
          try {
            await sink.close?.();
          } catch (error) {
            report(undefined, sink, error);
          }
        }
      },
    },
  );
}

function buildRecord(
  invocation: ToolInvocation,
  response: ToolResponse,
  parts: {
    startedAt: number;
    durationMs: number;
    args: unknown;
    redact: (value: unknown) => unknown;
  },
): CallRecord {
  const governance = governanceOf(response);
  const error = response.metadata?.error;
  const rollback = response.metadata?.rollback?.reason;
  const record: CallRecord = {
    callId: invocation.context.callId,
    tool: invocation.name,
    namespace: namespaceOf(invocation),
    startedAt: new Date(parts.startedAt).toISOString(),
    durationMs: Math.round(parts.durationMs * 1000) / 1000,
    arguments: parts.redact(parts.args),
    outcome: response.isError ? 'error' : rollback !== undefined ? 'rollback' : 'ok',
    bytes: responseBytes(response),
    retries: governance.retries ?? 0,
  };
  if (governance.repairedArguments !== undefined)
    record.repairedArguments = parts.redact(governance.repairedArguments);
  if (governance.repairs !== undefined) record.repairs = governance.repairs;
  if (response.isError) {
    if (typeof error?.code === 'string') record.errorCode = error.code;
    if (typeof error?.message === 'string') record.errorMessage = error.message;
  }
  if (governance.cache !== undefined) record.cache = governance.cache;
  if (governance.duplicate !== undefined) record.duplicate = governance.duplicate;
  if (rollback !== undefined) record.rollback = rollback;
  if (governance.rollbackSuppressed !== undefined)
    record.rollbackSuppressed = governance.rollbackSuppressed;
  if (governance.truncated !== undefined) record.truncated = governance.truncated;
  if (governance.circuit !== undefined) record.circuit = governance.circuit;
  if (governance.queuedMs !== undefined) record.queuedMs = governance.queuedMs;
  return record;
}

/** A sink that keeps records in memory (the newest `maxRecords`). */
export interface MemorySink extends CallLogSink {
  readonly records: CallRecord[];
  clear(): void;
}

/**
 * Keep records in memory, e.g. for tests, a debug panel, or per-run statistics.
 * @param options - `maxRecords` (default 10 000): the oldest are dropped in batches, so up to
 *   an eighth more may be held for a while
 */
export function memorySink(options: { maxRecords?: number } = {}): MemorySink {
  const max = options.maxRecords ?? 10_000;
  const slack = Math.floor(max / 8);
  const records: CallRecord[] = [];
  return {
    records,
    write(record) {
      records.push(record);
      // Trim in batches: dropping one record per call would move the whole array every call.
      if (records.length > max + slack) records.splice(0, records.length - max);
    },
    clear() {
      records.length = 0;
    },
  };
}

/**
 * Append records to a file, one JSON object per line. Writes are buffered by a stream; call
 * `close()` (or the call log's `close()`) to flush.
 * @param options - `path` of the file (created if missing, appended to otherwise)
 */
export function jsonlFileSink(options: { path: string }): CallLogSink {
  let stream: WriteStream | undefined;
  let failure: unknown;
  return {
    write(record) {
      if (failure !== undefined) throw failure;
      stream ??= createWriteStream(options.path, { flags: 'a' }).on('error', (error) => {
        failure = error;
      });
      stream.write(`${JSON.stringify(record)}\n`);
    },
    close() {
      const open = stream;
      stream = undefined;
      if (open === undefined) return;
      return new Promise<void>((resolve) => open.end(resolve));
    },
  };
}

/** The parts of `@opentelemetry/api`'s Tracer an {@link openTelemetrySink} uses. */
export interface OpenTelemetryTracer {
  startSpan(
    name: string,
    options?: {
      startTime?: number;
      attributes?: Record<string, string | number | boolean>;
      kind?: number;
    },
  ): {
    setStatus(status: { code: number; message?: string }): unknown;
    end(endTime?: number): void;
  };
}

const SPAN_KIND_INTERNAL = 0;
const SPAN_STATUS_ERROR = 2; // SpanStatusCode.ERROR in @opentelemetry/api

/**
 * Emit one OpenTelemetry span per call (`execute_tool <name>`, with the GenAI semantic
 * convention attributes plus `quiver.*` flags), timed from the call's start to its end.
 * Pass a tracer, or leave it out to use `trace.getTracer('@quiver/executor-governance')` from
 * `@opentelemetry/api` (an optional peer dependency: without it, the sink does nothing and
 * logs why once).
 *
 * @param options - `tracer`, and `logger` for the missing-package notice
 */
export function openTelemetrySink(
  options: { tracer?: OpenTelemetryTracer; logger?: Logger } = {},
): CallLogSink {
  let tracer: OpenTelemetryTracer | undefined | null = options.tracer;
  let loading: Promise<void> | undefined;
  const emit = (record: CallRecord) => {
    if (!tracer) return;
    const start = Date.parse(record.startedAt);
    const attributes: Record<string, string | number | boolean> = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': record.tool,
      'gen_ai.tool.call.id': record.callId,
      'quiver.namespace': record.namespace,
      'quiver.outcome': record.outcome,
      'quiver.bytes': record.bytes,
      'quiver.retries': record.retries,
    };
    if (record.errorCode) attributes['error.type'] = record.errorCode;
    if (record.cache) attributes['quiver.cache'] = record.cache;
    if (record.duplicate) attributes['quiver.duplicate.count'] = record.duplicate.count;
    if (record.rollback) attributes['quiver.rollback'] = record.rollback;
    if (record.repairs) attributes['quiver.repairs'] = record.repairs.length;
    if (record.truncated) attributes['quiver.truncated'] = true;
    const span = tracer.startSpan(`execute_tool ${record.tool}`, {
      startTime: start,
      attributes,
      kind: SPAN_KIND_INTERNAL,
    });
    if (record.outcome === 'error')
      span.setStatus({
        code: SPAN_STATUS_ERROR,
        ...(record.errorMessage ? { message: record.errorMessage } : {}),
      });
    span.end(start + record.durationMs);
  };
  return {
    write(record) {
      if (tracer !== undefined) {
        emit(record);
        return;
      }
      loading ??= loadModule<OpenTelemetryApi>('@opentelemetry/api').then(
        (api) => {
          tracer = api.trace.getTracer(
            '@quiver/executor-governance',
          ) as unknown as OpenTelemetryTracer;
        },
        (error: unknown) => {
          tracer = null;
          (options.logger ?? silentLogger).warn(
            'openTelemetrySink: @opentelemetry/api is not installed; spans are not emitted',
            {
              error: errorMessage(error),
            },
          );
        },
      );
      return loading.then(() => emit(record));
    },
  };
}
