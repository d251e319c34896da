export type {
  ArgumentRepair,
  ArgumentRepairMiddleware,
  ArgumentRepairOptions,
  RepairOptions,
  RepairResult,
  RepairRule,
} from './argument-repair.js';
export { DEFAULT_SYNONYMS, argumentRepair, repairArguments } from './argument-repair.js';
export type {
  CallLogMiddleware,
  CallLogOptions,
  CallLogSink,
  CallOutcome,
  CallRecord,
  MemorySink,
  OpenTelemetryTracer,
} from './call-log.js';
export { callLog, jsonlFileSink, memorySink, openTelemetrySink } from './call-log.js';
export type { CallTimeoutMiddleware, CallTimeoutOptions } from './call-timeout.js';
export { callTimeout } from './call-timeout.js';
export { canonicalJson } from './canonical-json.js';
export type {
  CircuitBreakerMiddleware,
  CircuitBreakerOptions,
  CircuitBreakerPolicy,
  CircuitState,
} from './circuit-breaker.js';
export { circuitBreaker } from './circuit-breaker.js';
export type { Clock } from './clock.js';
export { systemClock } from './clock.js';
export type { ConcurrencyLimitMiddleware, ConcurrencyLimitOptions } from './concurrency-limit.js';
export { concurrencyLimit } from './concurrency-limit.js';
export type {
  DuplicateAction,
  DuplicateDetectionMiddleware,
  DuplicateDetectionOptions,
  DuplicatePolicy,
} from './duplicate-detection.js';
export { duplicateDetection } from './duplicate-detection.js';
export {
  CircuitOpenError,
  ConcurrencyQueueFullError,
  DuplicateCallRefusedError,
  GovernanceErrorCodes,
} from './errors.js';
export type { FormatForModelOptions } from './format-for-model.js';
export { formatForModel } from './format-for-model.js';
export type { Governance, GovernancePolicy, GovernanceStages } from './governed.js';
export { GOVERNANCE_ORDER, composeMiddleware, governed } from './governed.js';
export type { GovernanceAnnotations } from './governance-metadata.js';
export { GOVERNANCE_KEY, governanceOf } from './governance-metadata.js';
export type { CallNext, GovernanceMiddleware } from './governance-middleware.js';
export type {
  QualityCheck,
  QualityRule,
  QualityRuleData,
  ResultQualityMiddleware,
  ResultQualityOptions,
  ToolKind,
} from './quality-rules.js';
export { DEFAULT_QUALITY_RULE_DATA, builtinQualityRules, resultQuality } from './quality-rules.js';
export type { RedactionOptions } from './redaction.js';
export {
  DEFAULT_SECRET_KEYS,
  DEFAULT_SECRET_VALUE_PATTERNS,
  createRedactor,
  redactSecrets,
} from './redaction.js';
export type {
  ResultCacheMiddleware,
  ResultCacheOptions,
  ResultCacheStats,
  ToolCachePolicy,
} from './result-cache.js';
export { resultCache } from './result-cache.js';
export type {
  ResultSizeMiddleware,
  ResultSizeOptions,
  SizeBudget,
  TruncationReport,
} from './result-size.js';
export { looksBinary, resultSizeLimit, truncateResponse } from './result-size.js';
export type { RetryMiddleware, RetryOptions, RetryPolicy } from './retry.js';
export { retry } from './retry.js';
export type { GptEncodingName, Tokenizer } from './tokenizer.js';
export { gptTokenizer } from './tokenizer.js';
