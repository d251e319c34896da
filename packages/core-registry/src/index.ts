export type {
  AnyTool,
  AnyToolSpec,
  ApprovalPredicate,
  InferArguments,
  Tool,
  ToolResult,
  ToolSpec,
} from './define-tool.js';
export { defineTool, isTool } from './define-tool.js';
export type { ParsedArguments } from './lenient-json.js';
export { parseToolArguments } from './lenient-json.js';
export type { NextHandler, ToolInvocation, ToolMiddleware } from './middleware.js';
export type { SchemaConversion, SchemaTarget } from './provider-schemas.js';
export { convertSchema } from './provider-schemas.js';
export type { AnyToolFactory, ToolConfigMap, ToolFactory } from './registry.js';
export { ToolRegistry, defaultRegistry, getTool, registerTool } from './registry.js';
export { mergeResponses } from './responses.js';
export type { ParametersSchema, ZodSchema } from './tool-schema.js';
export { isZodSchema } from './tool-schema.js';
export type {
  AnthropicTool,
  CallContext,
  GeminiFunctionDeclaration,
  ProviderToolSchemas,
  SchemaOptions,
  ToolkitOptions,
} from './toolkit.js';
export { BASIC_GROUP, META_TOOL_NAME, Toolkit } from './toolkit.js';
export type {
  NamesakeStrategy,
  RegisterOptions,
  RegisteredTool,
  ToolGroup,
  ToolkitState,
} from './toolkit-types.js';
export type { BackgroundTaskOptions, TaskSnapshot, TaskStatus } from './background-tasks.js';
export { BackgroundTasks, backgroundTasksOf, enableBackgroundTasks } from './background-tasks.js';
export type { Skill } from './skills.js';
export { SkillError, loadSkill, registerSkill } from './skills.js';
export type { StorageArguments, StorageToolOptions } from './storage-tool.js';
export { createStorageTool } from './storage-tool.js';
