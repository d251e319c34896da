const marker = Symbol.for('quiver.error');

/**
 * Base class of every error Quiver raises. Each error has a stable machine-readable `code`
 * and a message that says what happened and what to do about it.
 *
 * `QuiverError.isInstance` works across package copies (it checks a global symbol, not the
 * prototype chain), so two installed versions of `@quiver/core` still recognise each other's errors.
 */
export class QuiverError extends Error {
  /** @internal */
  readonly [marker] = true;
  /** Stable error code, e.g. `tool_not_found`. */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }

  /** True for any Quiver error, including ones made by another copy of this package. */
  static isInstance(error: unknown): error is QuiverError {
    return typeof error === 'object' && error !== null && marker in error;
  }

  /** A plain, JSON-serialisable view of the error (for logs, tool responses and HTTP bodies). */
  toJSON(): Record<string, unknown> {
    return { name: this.name, code: this.code, message: this.message };
  }
}

/** One problem found while validating tool arguments. */
export interface ArgumentIssue {
  /** Path to the offending value, e.g. `["options", "limit"]`; empty for the whole object. */
  path: (string | number)[];
  /** What is wrong and what the schema expects, phrased for a model to act on. */
  message: string;
}

/** Error codes used across Quiver. */
export const ErrorCodes = {
  toolNotFound: 'tool_not_found',
  toolArgument: 'tool_argument_invalid',
  toolTimeout: 'tool_timeout',
  toolExecution: 'tool_execution_failed',
  toolAborted: 'tool_aborted',
  toolRegistration: 'tool_registration_invalid',
  modelService: 'model_service_error',
  configuration: 'configuration_invalid',
} as const;

/** The model asked for a tool that is not registered (or not active). */
export class ToolNotFoundError extends QuiverError {
  readonly toolName: string;
  readonly availableTools: string[];

  constructor(
    toolName: string,
    availableTools: string[] = [],
    options?: { cause?: unknown; reason?: string },
  ) {
    const list = availableTools.length > 0 ? ` Available tools: ${availableTools.join(', ')}.` : '';
    const reason = options?.reason ?? `Tool "${toolName}" does not exist.`;
    super(ErrorCodes.toolNotFound, `${reason}${list}`, options);
    this.toolName = toolName;
    this.availableTools = availableTools;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), toolName: this.toolName };
  }
}

/** The arguments could not be parsed or do not match the tool's schema. */
export class ToolArgumentError extends QuiverError {
  readonly toolName: string;
  readonly issues: ArgumentIssue[];

  constructor(
    toolName: string,
    issues: ArgumentIssue[],
    options?: { cause?: unknown; summary?: string },
  ) {
    const lines = issues.map((issue) => {
      const where = issue.path.length > 0 ? `"${issue.path.join('.')}"` : 'arguments';
      return `- ${where}: ${issue.message}`;
    });
    const summary = options?.summary ?? `Invalid arguments for tool "${toolName}".`;
    super(ErrorCodes.toolArgument, [summary, ...lines].join('\n'), options);
    this.toolName = toolName;
    this.issues = issues;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), toolName: this.toolName, issues: this.issues };
  }
}

/** A tool call did not finish within its time limit. */
export class ToolTimeoutError extends QuiverError {
  readonly toolName: string;
  readonly timeoutMs: number;

  constructor(toolName: string, timeoutMs: number, options?: { cause?: unknown }) {
    super(
      ErrorCodes.toolTimeout,
      `Tool "${toolName}" did not finish within ${timeoutMs} ms and was stopped. Try a smaller request, or raise the tool's timeout.`,
      options,
    );
    this.toolName = toolName;
    this.timeoutMs = timeoutMs;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), toolName: this.toolName, timeoutMs: this.timeoutMs };
  }
}

/** A tool ran and failed. `isRetryable` marks transient failures (network errors, 429, 5xx). */
export class ToolExecutionError extends QuiverError {
  readonly toolName: string;
  readonly isRetryable: boolean;
  /** Suggested wait before a retry, in milliseconds (e.g. from a `Retry-After` header). */
  readonly retryAfterMs: number | undefined;

  constructor(
    toolName: string,
    message: string,
    options?: { cause?: unknown; isRetryable?: boolean; retryAfterMs?: number; code?: string },
  ) {
    super(options?.code ?? ErrorCodes.toolExecution, message, options);
    this.toolName = toolName;
    this.isRetryable = options?.isRetryable ?? false;
    this.retryAfterMs = options?.retryAfterMs;
  }

  override toJSON(): Record<string, unknown> {
    return {
      ...super.toJSON(),
      toolName: this.toolName,
      isRetryable: this.isRetryable,
      ...(this.retryAfterMs !== undefined ? { retryAfterMs: this.retryAfterMs } : {}),
    };
  }
}

/** A tool call was cancelled through its AbortSignal. */
export class ToolAbortedError extends QuiverError {
  readonly toolName: string;

  constructor(toolName: string, options?: { cause?: unknown }) {
    super(ErrorCodes.toolAborted, `Tool "${toolName}" was cancelled before it finished.`, options);
    this.toolName = toolName;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), toolName: this.toolName };
  }
}

/** A tool could not be registered: invalid schema, duplicate name under the `raise` strategy, bad options. */
export class ToolRegistrationError extends QuiverError {
  readonly toolName: string;

  constructor(toolName: string, message: string, options?: { cause?: unknown }) {
    super(ErrorCodes.toolRegistration, message, options);
    this.toolName = toolName;
  }
}

/** A model endpoint answered with an error or could not be reached. */
export class ModelServiceError extends QuiverError {
  /** HTTP status, when the service answered. */
  readonly statusCode: number | undefined;
  /** Response body (text or parsed JSON), when there was one. */
  readonly body: unknown;
  readonly isRetryable: boolean;

  constructor(
    message: string,
    options?: { cause?: unknown; statusCode?: number; body?: unknown; isRetryable?: boolean },
  ) {
    super(ErrorCodes.modelService, message, options);
    this.statusCode = options?.statusCode;
    this.body = options?.body;
    this.isRetryable =
      options?.isRetryable ??
      (options?.statusCode === undefined ||
        options.statusCode === 408 ||
        options.statusCode === 429 ||
        options.statusCode >= 500);
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), statusCode: this.statusCode, isRetryable: this.isRetryable };
  }
}

/** The caller configured something wrongly (a missing env var, an invalid option). Not a runtime failure. */
export class ConfigurationError extends QuiverError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCodes.configuration, message, options);
  }
}

/** Turn anything thrown into a message string without throwing again. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  // An Error from another realm (a vm context, a test runner's sandbox) fails `instanceof Error`.
  if (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { message?: unknown }).message === 'string'
  ) {
    return (error as { message: string }).message;
  }
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
