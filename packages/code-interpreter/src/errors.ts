import { QuiverError } from '@quiver/core';

/** Stable codes of the errors this package raises. */
export const CodeInterpreterErrorCodes = {
  pythonNotFound: 'python_not_found',
  sandboxUnavailable: 'sandbox_unavailable',
  kernelStartFailed: 'kernel_start_failed',
  kernelDied: 'kernel_died',
  kernelLimit: 'kernel_limit_reached',
  executionTimeout: 'execution_timeout',
  pythonException: 'python_exception',
  fileNotAllowed: 'file_not_allowed',
  invalidSignature: 'invalid_signature',
  closed: 'interpreter_closed',
} as const;

/** Base class of every error raised by `@quiver/code-interpreter`. */
export class CodeInterpreterError extends QuiverError {}

/** The kernel process could not be started or did not complete the kernel_info handshake. */
export class KernelStartError extends CodeInterpreterError {
  /** The last lines the kernel process wrote to stderr, for diagnosis. */
  readonly stderr: string;

  constructor(message: string, options?: { cause?: unknown; stderr?: string }) {
    super(CodeInterpreterErrorCodes.kernelStartFailed, message, options);
    this.stderr = options?.stderr ?? '';
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), stderr: this.stderr };
  }
}

/** The kernel process exited or stopped answering heartbeats; its state is gone. */
export class KernelDiedError extends CodeInterpreterError {
  /** Exit code of the kernel process, when it exited normally. */
  readonly exitCode: number | null;
  /** Signal that ended the kernel process (e.g. `SIGKILL` after an out-of-memory kill). */
  readonly signal: string | null;

  constructor(
    message: string,
    options?: { cause?: unknown; exitCode?: number | null; signal?: string | null },
  ) {
    super(CodeInterpreterErrorCodes.kernelDied, message, options);
    this.exitCode = options?.exitCode ?? null;
    this.signal = options?.signal ?? null;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), exitCode: this.exitCode, signal: this.signal };
  }
}

/** Starting another kernel would exceed `maxKernels`. */
export class KernelLimitError extends CodeInterpreterError {
  readonly maxKernels: number;

  constructor(maxKernels: number) {
    super(
      CodeInterpreterErrorCodes.kernelLimit,
      `All ${maxKernels} kernels allowed by maxKernels are in use. Close an idle session (closeSession) or raise maxKernels.`,
    );
    this.maxKernels = maxKernels;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), maxKernels: this.maxKernels };
  }
}

/** A run did not finish within its time limit and was interrupted (or the kernel was restarted). */
export class ExecutionTimeoutError extends CodeInterpreterError {
  readonly timeoutMs: number;
  /** True when the interrupt did not take and the kernel was restarted, losing its variables. */
  readonly stateLost: boolean;

  constructor(timeoutMs: number, stateLost: boolean) {
    super(
      CodeInterpreterErrorCodes.executionTimeout,
      stateLost
        ? `The code did not finish within ${timeoutMs} ms and ignored the interrupt, so the kernel was restarted: all variables and imports were lost. Re-run the set-up code, and make long work smaller or faster.`
        : `The code did not finish within ${timeoutMs} ms and was interrupted (KeyboardInterrupt). Variables defined before the interrupt are kept. Make the work smaller or faster, or raise the timeout.`,
    );
    this.timeoutMs = timeoutMs;
    this.stateLost = stateLost;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), timeoutMs: this.timeoutMs, stateLost: this.stateLost };
  }
}

/** The Python code raised an exception; the kernel is fine and keeps its state. */
export class PythonExceptionError extends CodeInterpreterError {
  readonly ename: string;
  readonly evalue: string;

  constructor(ename: string, evalue: string) {
    super(
      CodeInterpreterErrorCodes.pythonException,
      `The code raised ${ename}${evalue ? `: ${evalue}` : ''}. Fix the code and run it again; earlier variables are kept.`,
    );
    this.ename = ename;
    this.evalue = evalue;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), ename: this.ename, evalue: this.evalue };
  }
}

/** A file named in a call is outside the allowed roots, missing, or not a regular file. */
export class FileNotAllowedError extends CodeInterpreterError {
  readonly path: string;

  constructor(path: string, reason: string) {
    super(
      CodeInterpreterErrorCodes.fileNotAllowed,
      `Cannot copy "${path}" into the session: ${reason}`,
    );
    this.path = path;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), path: this.path };
  }
}

/** A Jupyter message arrived unsigned or with a wrong HMAC signature and was rejected. */
export class InvalidSignatureError extends CodeInterpreterError {
  constructor(message: string) {
    super(CodeInterpreterErrorCodes.invalidSignature, message);
  }
}

/** The interpreter (or kernel) was closed; create a new one. */
export class InterpreterClosedError extends CodeInterpreterError {
  constructor(what = 'The code interpreter') {
    super(
      CodeInterpreterErrorCodes.closed,
      `${what} was closed. Create a new one to run more code.`,
    );
  }
}
