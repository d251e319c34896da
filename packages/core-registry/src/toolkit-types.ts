import type { JsonSchemaObject, LocalizedText, ToolResponse, ToolCall } from '@quiver/core';
import type { AnyTool } from './define-tool.js';

/** How to resolve a name clash at registration. */
export type NamesakeStrategy = 'raise' | 'override' | 'skip' | 'rename';

/** Options of {@link Toolkit.register}. */
export interface RegisterOptions {
  /** Group to put the tool in (must exist; see `createGroup`). Defaults to the tool's own group or `basic`. */
  group?: string;
  /**
   * Arguments bound at registration: removed from the schema the model sees and injected into
   * every call (they win over anything the model sends). AgentScope's `preset_kwargs`.
   */
  presetArgs?: Record<string, unknown>;
  /** Register under another name. */
  name?: string;
  /** Replace the description the model sees. */
  description?: LocalizedText;
  /** Transform each chunk the tool produces (after the tool, before the middleware sees it). */
  postprocess?: (
    chunk: ToolResponse,
    call: { toolCall: ToolCall; arguments: Record<string, unknown> },
  ) => ToolResponse;
  /** What to do when the name is taken. Default: the toolkit's `namesake` option (`raise`). */
  namesake?: NamesakeStrategy;
  /** Time limit of a call in milliseconds; overrides the tool's own. */
  timeoutMs?: number;
}

/** A tool as the toolkit holds it: the tool plus its registration options. */
export interface RegisteredTool {
  readonly name: string;
  readonly tool: AnyTool;
  readonly group: string;
  readonly description: LocalizedText;
  /** The schema the model sees (preset arguments removed). */
  readonly modelParameters: JsonSchemaObject;
  readonly presetArgs: Readonly<Record<string, unknown>> | undefined;
  readonly postprocess: RegisterOptions['postprocess'];
  readonly timeoutMs: number | undefined;
}

/** A named set of tools that is activated and deactivated together. */
export interface ToolGroup {
  name: string;
  description: string;
  /** Usage notes given to the model when the group is activated. */
  notes: string;
  active: boolean;
}

/** What `exportState` returns and `importState` takes: enough to resume an agent's tool set. */
export interface ToolkitState {
  version: 1;
  activeGroups: string[];
}
