export { CodeInterpreter } from './code-interpreter.js';
export type {
  CodeInterpreterInfo,
  CodeInterpreterOptions,
  RunOptions,
  RunResult,
} from './code-interpreter.js';
export {
  CodeInterpreterError,
  CodeInterpreterErrorCodes,
  ExecutionTimeoutError,
  FileNotAllowedError,
  InterpreterClosedError,
  InvalidSignatureError,
  KernelDiedError,
  KernelLimitError,
  KernelStartError,
  PythonExceptionError,
} from './errors.js';
export { Kernel } from './kernel.js';
export type {
  ExecutionStatus,
  KernelExecuteOptions,
  KernelExecution,
  KernelOptions,
  OutputItem,
} from './kernel.js';
export { MATPLOTLIBRC } from './kernel-environment.js';
export { htmlToText, sanitizeOutput, stripAnsi } from './output-format.js';
export { PYTHON_ENV_VAR, findPython, pythonCandidates } from './python-discovery.js';
export type { PythonInfo } from './python-discovery.js';
export { detectSandbox } from './sandbox.js';
export type { SandboxMode, SandboxStatus } from './sandbox.js';
export { killAllKernelsSync } from './process-reaper.js';
export {
  SESSION_STATE_KEY,
  closeDefaultCodeInterpreter,
  codeInterpreterTool,
  createCodeInterpreterTool,
  createPythonExecutorTool,
  getDefaultCodeInterpreter,
  pythonExecutorTool,
} from './tools.js';
export type { CodeToolOptions } from './tools.js';
