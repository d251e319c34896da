import type {
  JsonSchemaObject,
  Language,
  Logger,
  OpenAITool,
  ToolCall,
  ToolContext,
  ToolResponse,
} from '@quiver/core';
import {
  QuiverError,
  ToolAbortedError,
  ToolArgumentError,
  ToolExecutionError,
  ToolNotFoundError,
  ToolRegistrationError,
  errorMessage,
  errorResponse,
  localize,
  silentLogger,
  toToolResponse,
} from '@quiver/core';
import { z } from 'zod';
import type { AnyTool, AnyToolSpec } from './define-tool.js';
import { defineTool, isTool } from './define-tool.js';
import { parseToolArguments } from './lenient-json.js';
import type { NextHandler, ToolInvocation, ToolMiddleware } from './middleware.js';
import type { SchemaTarget } from './provider-schemas.js';
import { convertSchema } from './provider-schemas.js';
import { CallToolContext } from './call-context.js';
import { CallCancellation } from './call-cancellation.js';
import type { BackgroundTasks } from './background-tasks.js';
import { backgroundTasksOf, enableBackgroundTasks } from './background-tasks.js';
import { mergeResponses } from './responses.js';
import type { Skill } from './skills.js';
import { registerSkill } from './skills.js';
import {
  END_CHUNK,
  ToolRun,
  asLast,
  failure,
  isPlainResult,
  runToolStream,
  single,
} from './tool-stream.js';
import { validateRegistered } from './validate-registered.js';
import type {
  NamesakeStrategy,
  RegisterOptions,
  RegisteredTool,
  ToolGroup,
  ToolkitState,
} from './toolkit-types.js';

/** The group every toolkit has; its tools are always active. */
export const BASIC_GROUP = 'basic';
/** Name of the opt-in meta tool that switches tool groups on and off. */
export const META_TOOL_NAME = 'reset_equipped_tools';

/** Options of {@link Toolkit}. */
export interface ToolkitOptions {
  /** Language of tool descriptions given to the model. Default `en`. */
  language?: Language;
  /** Time limit of a call when neither the tool nor its registration sets one. Default 5 minutes. */
  defaultTimeoutMs?: number;
  /** Default strategy for a name clash. Default `raise`. */
  namesake?: NamesakeStrategy;
  logger?: Logger;
}

/** A tool in Anthropic's Messages API format. */
export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: JsonSchemaObject;
}

/** A function declaration in Gemini's format (`parameters` absent for a tool without any). */
export interface GeminiFunctionDeclaration {
  name: string;
  description: string;
  parameters?: JsonSchemaObject;
}

/** The schema type `getJsonSchemas` returns for each target. */
export interface ProviderToolSchemas {
  openai: OpenAITool;
  'openai-strict': OpenAITool;
  anthropic: AnthropicTool;
  gemini: GeminiFunctionDeclaration;
}

/** Options of {@link Toolkit.getJsonSchemas}. */
export interface SchemaOptions<TTarget extends SchemaTarget> {
  /** Which API's dialect. Default `openai`. */
  target?: TTarget;
  language?: Language;
  /** Include tools of inactive groups too. Default false. */
  includeInactive?: boolean;
  /** Told about each tool left out because the target cannot express its schema. */
  onExcluded?: (toolName: string, reason: string) => void;
}

/** What a caller may pass as a tool's context; anything left out gets a default. */
export type CallContext = Partial<ToolContext>;

/** The context of `callToCompletion` when the caller passes none (only read, never changed). */
const GATHERED: CallContext = Object.freeze({ streaming: false });

/** Read a stream to its end and merge its chunks into one response. */
async function gather(stream: AsyncIterable<ToolResponse>): Promise<ToolResponse> {
  const chunks: ToolResponse[] = [];
  for await (const chunk of stream) {
    chunks.push(chunk);
    // The chunk marked last is the end of the stream: no need to wait a turn to learn so.
    if (chunk.isLast === true) break;
  }
  return mergeResponses(chunks);
}

/**
 * A set of tools the model can call: registration, groups, provider schemas, middleware, and a
 * `call` that never throws for anything a model or a tool can do.
 *
 * @example
 * ```ts
 * const toolkit = new Toolkit();
 * toolkit.register(calculatorTool);
 * const response = await toolkit.callToCompletion({ id: '1', name: 'calculator', arguments: '{"expression":"2*21"}' });
 * ```
 */
export class Toolkit {
  readonly language: Language;
  readonly logger: Logger;
  readonly defaultTimeoutMs: number;
  readonly #namesake: NamesakeStrategy;
  readonly #tools = new Map<string, RegisteredTool>();
  readonly #groups = new Map<string, ToolGroup>([
    [
      BASIC_GROUP,
      {
        name: BASIC_GROUP,
        description: 'Tools that are always available.',
        notes: '',
        active: true,
      },
    ],
  ]);
  readonly #middlewares: ToolMiddleware[] = [];
  readonly #inFlight = new Set<CallCancellation>();
  readonly #closeHooks: (() => void | Promise<void>)[] = [];
  #handler: NextHandler;
  #metaTool = false;
  #closed = false;

  constructor(options: ToolkitOptions = {}) {
    this.language = options.language ?? 'en';
    this.logger = options.logger ?? silentLogger;
    this.defaultTimeoutMs = options.defaultTimeoutMs ?? 300_000;
    this.#namesake = options.namesake ?? 'raise';
    this.#handler = (invocation) => this.#execute(invocation);
  }

  // ---------------------------------------------------------------- registration

  /**
   * Register a tool (made by `defineTool`, or a spec that is defined here).
   * @returns the registered tool, or `undefined` when the name was taken and the strategy is `skip`
   * @throws ToolRegistrationError on an invalid tool, an unknown group, or a clash under `raise`
   */
  register(tool: AnyTool | AnyToolSpec, options: RegisterOptions = {}): RegisteredTool | undefined {
    this.#assertOpen();
    const defined: AnyTool = isTool(tool) ? tool : defineTool(tool);
    let name = options.name ?? defined.name;
    if (options.name !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(name)) {
      throw new ToolRegistrationError(
        name,
        `Invalid tool name ${JSON.stringify(name)}: use 1 to 64 letters, digits, "_" or "-".`,
      );
    }
    const group = options.group ?? defined.group ?? BASIC_GROUP;
    if (!this.#groups.has(group)) {
      throw new ToolRegistrationError(
        name,
        `Tool "${name}" names the group "${group}", which does not exist. Create it first with toolkit.createGroup({ name: "${group}", description }).`,
      );
    }
    if (this.#tools.has(name)) {
      const strategy = options.namesake ?? this.#namesake;
      switch (strategy) {
        case 'raise':
          throw new ToolRegistrationError(
            name,
            `A tool named "${name}" is already registered. Pass { namesake: 'override' | 'skip' | 'rename' } or another name.`,
          );
        case 'skip':
          this.logger.debug('tool registration skipped: name taken', { tool: name });
          return undefined;
        case 'rename': {
          // Shorten the base, not the suffix, so the name stays within 64 characters and unique.
          const base = name;
          const candidate = (suffix: number) =>
            `${base.slice(0, 63 - String(suffix).length)}_${suffix}`;
          let suffix = 2;
          while (this.#tools.has(candidate(suffix))) suffix++;
          name = candidate(suffix);
          break;
        }
        case 'override':
          break;
        default:
          throw new ToolRegistrationError(
            name,
            `Unknown namesake strategy ${JSON.stringify(strategy)}.`,
          );
      }
    }
    const presetArgs = options.presetArgs ? Object.freeze({ ...options.presetArgs }) : undefined;
    if (options.timeoutMs !== undefined && !(options.timeoutMs > 0)) {
      throw new ToolRegistrationError(
        name,
        `Tool "${name}": timeoutMs must be a positive number of milliseconds.`,
      );
    }
    const registered: RegisteredTool = Object.freeze({
      name,
      tool: defined,
      group,
      description: options.description ?? defined.description,
      modelParameters: presetArgs
        ? withoutPresets(defined.parameters, Object.keys(presetArgs))
        : defined.parameters,
      presetArgs,
      postprocess: options.postprocess,
      timeoutMs: options.timeoutMs ?? defined.timeoutMs,
    });
    this.#tools.set(name, registered);
    // The first background tool brings the task tools (view_task, wait_task, cancel_task).
    if (defined.background) enableBackgroundTasks(this);
    return registered;
  }

  /** Remove a tool. @returns whether it was registered */
  unregister(name: string): boolean {
    return this.#tools.delete(name);
  }

  /** True when a tool of that name is registered (active or not). */
  has(name: string): boolean {
    return this.#tools.has(name);
  }

  /** The registered tool of that name, active or not. */
  get(name: string): RegisteredTool | undefined {
    return this.#tools.get(name);
  }

  /** Every registered tool, in registration order. */
  list(options: { activeOnly?: boolean } = {}): RegisteredTool[] {
    const all = [...this.#tools.values()];
    return options.activeOnly ? all.filter((tool) => this.isActive(tool.name)) : all;
  }

  /** True when the tool exists and its group is active. */
  isActive(name: string): boolean {
    const tool = this.#tools.get(name);
    return tool !== undefined && (this.#groups.get(tool.group)?.active ?? false);
  }

  // ---------------------------------------------------------------- groups

  /** Create a tool group (inactive unless `active: true`). @throws ToolRegistrationError if it exists */
  createGroup(group: {
    name: string;
    description: string;
    notes?: string;
    active?: boolean;
  }): ToolGroup {
    if (this.#groups.has(group.name)) {
      throw new ToolRegistrationError('', `The tool group "${group.name}" already exists.`);
    }
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(group.name)) {
      throw new ToolRegistrationError(
        '',
        `Invalid group name ${JSON.stringify(group.name)}: use letters, digits, "_" or "-".`,
      );
    }
    const created: ToolGroup = {
      name: group.name,
      description: group.description,
      notes: group.notes ?? '',
      active: group.active ?? false,
    };
    this.#groups.set(group.name, created);
    this.#refreshMetaTool();
    return { ...created };
  }

  /** Activate groups. @returns the names that do not exist (nothing else changes for them) */
  activateGroups(names: string[]): string[] {
    return this.#setActive(names, true);
  }

  /** Deactivate groups (`basic` cannot be). @returns the names that do not exist */
  deactivateGroups(names: string[]): string[] {
    return this.#setActive(
      names.filter((name) => name !== BASIC_GROUP),
      false,
    );
  }

  /** Remove a group and every tool in it (`basic` cannot be removed). @returns whether it existed */
  removeGroup(name: string): boolean {
    if (name === BASIC_GROUP || !this.#groups.delete(name)) return false;
    for (const tool of [...this.#tools.values()])
      if (tool.group === name) this.#tools.delete(tool.name);
    this.#refreshMetaTool();
    return true;
  }

  /** All groups, `basic` first. */
  groups(): ToolGroup[] {
    return [...this.#groups.values()].map((group) => ({ ...group }));
  }

  #setActive(names: string[], active: boolean): string[] {
    const missing: string[] = [];
    for (const name of names) {
      const group = this.#groups.get(name);
      if (group) group.active = active;
      else missing.push(name);
    }
    return missing;
  }

  /**
   * Offer the model the `reset_equipped_tools` meta tool: its parameters are one boolean per
   * group (regenerated whenever groups change); calling it sets which groups are active, and its
   * result carries the usage notes of the activated groups.
   */
  enableMetaTool(): void {
    this.#metaTool = true;
    this.#refreshMetaTool();
  }

  #refreshMetaTool(): void {
    if (!this.#metaTool) return;
    const groups = [...this.#groups.values()].filter((group) => group.name !== BASIC_GROUP);
    const properties = Object.fromEntries(
      groups.map((group) => [group.name, { type: 'boolean', description: group.description }]),
    );
    const tool = defineTool({
      name: META_TOOL_NAME,
      description: {
        en: 'Choose which tool groups are equipped. Set a group to true to use its tools, false to put them away; groups left out are put away. Call it when the tools you need are not in your list.',
        zh: '选择要装备的工具组：设为 true 即可使用该组工具，设为 false 则收起；未列出的组会被收起。当所需工具不在列表中时调用它。',
      },
      parameters: { type: 'object', properties, additionalProperties: false },
      execute: (args: Record<string, unknown>) => {
        const wanted = new Set(
          Object.entries(args)
            .filter(([, on]) => on === true)
            .map(([name]) => name),
        );
        for (const group of groups) this.#groups.get(group.name)!.active = wanted.has(group.name);
        const active = groups.filter((group) => wanted.has(group.name));
        if (active.length === 0)
          return 'No tool groups are equipped now; only the basic tools are available.';
        const notes = active
          .map(
            (group) =>
              `## ${group.name}\n${group.description}${group.notes ? `\n${group.notes}` : ''}`,
          )
          .join('\n\n');
        return `Equipped tool groups: ${active.map((group) => group.name).join(', ')}.\n\n${notes}`;
      },
    });
    this.#tools.set(META_TOOL_NAME, {
      name: META_TOOL_NAME,
      tool,
      group: BASIC_GROUP,
      description: tool.description,
      modelParameters: tool.parameters,
      presetArgs: undefined,
      postprocess: undefined,
      timeoutMs: undefined,
    });
  }

  /**
   * Register an agent skill folder (SKILL.md + optional tool modules) as a tool group the model
   * activates through `reset_equipped_tools`. See `registerSkill`.
   * @throws SkillError for an invalid folder
   */
  registerSkill(dir: string): Promise<Skill> {
    return registerSkill(this, dir);
  }

  /** The background task manager, once a tool with `background: true` was registered. */
  get backgroundTasks(): BackgroundTasks | undefined {
    return backgroundTasksOf(this);
  }

  // ---------------------------------------------------------------- schemas

  /**
   * The schemas of the active tools in the dialect of `target` (default `openai`). A tool whose
   * schema the target cannot express is left out and reported through `onExcluded` (and the
   * logger); it never makes the whole list fail.
   */
  getJsonSchemas<TTarget extends SchemaTarget = 'openai'>(
    options: SchemaOptions<TTarget> = {},
  ): ProviderToolSchemas[TTarget][] {
    const target = (options.target ?? 'openai') as SchemaTarget;
    const language = options.language ?? this.language;
    const out: unknown[] = [];
    for (const registered of this.#tools.values()) {
      if (!options.includeInactive && !this.isActive(registered.name)) continue;
      const description = localize(registered.description, language);
      const converted = convertSchema(registered.modelParameters, target);
      if (!converted.ok) {
        this.logger.warn('tool left out of the schema list', {
          tool: registered.name,
          target,
          reason: converted.reason,
        });
        options.onExcluded?.(
          registered.name,
          `${target} cannot express its schema: ${converted.reason}`,
        );
        continue;
      }
      const schema = converted.schema;
      switch (target) {
        case 'openai':
        case 'openai-strict':
          out.push({
            type: 'function',
            function: {
              name: registered.name,
              description,
              parameters: schema ?? { type: 'object', properties: {} },
              ...(target === 'openai-strict' ? { strict: true } : {}),
            },
          } satisfies OpenAITool);
          break;
        case 'anthropic':
          out.push({
            name: registered.name,
            description,
            input_schema: schema!,
          } satisfies AnthropicTool);
          break;
        case 'gemini':
          out.push({
            name: registered.name,
            description,
            ...(schema ? { parameters: schema } : {}),
          } satisfies GeminiFunctionDeclaration);
          break;
      }
    }
    return out as ProviderToolSchemas[TTarget][];
  }

  // ---------------------------------------------------------------- middleware and calls

  /** Add a middleware around every call. The first added is the outermost. */
  use(middleware: ToolMiddleware): this {
    this.#assertOpen();
    this.#middlewares.push(middleware);
    let handler: NextHandler = (invocation) => this.#execute(invocation);
    for (let index = this.#middlewares.length - 1; index >= 0; index--) {
      handler = guarded(this.#middlewares[index]!, handler);
    }
    this.#handler = handler;
    return this;
  }

  /**
   * Call a tool. Always returns a stream of responses, the last one marked `isLast`; a failure of
   * any kind (unknown tool, unreadable or invalid arguments, a tool that throws or hangs, a
   * middleware that throws) is an error response in that stream. Never throws.
   */
  call(toolCall: ToolCall, context: CallContext = {}): AsyncIterable<ToolResponse> {
    return this.#call(toolCall, context);
  }

  /**
   * Call a tool and gather its stream into one response (contents joined, adjacent text merged).
   * The tool sees `context.streaming === false`, so it may skip progress nobody will see.
   */
  callToCompletion(toolCall: ToolCall, context?: CallContext): Promise<ToolResponse> {
    const gathered =
      context === undefined
        ? GATHERED
        : context.streaming === false
          ? context
          : { ...context, streaming: false };
    let stream: AsyncIterable<ToolResponse>;
    try {
      stream = this.#call(toolCall, gathered);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    // A Promise tool on the direct path: answered in one turn, no iterator in between.
    if (stream instanceof ToolRun) return stream.complete();
    return gather(stream);
  }

  #call(toolCall: ToolCall, partial: CallContext): AsyncIterable<ToolResponse> {
    const name = typeof toolCall?.name === 'string' ? toolCall.name : '';
    if (this.#closed) {
      return single(
        failure(
          name,
          new ToolExecutionError(name, 'The toolkit is closed; no more tool calls are accepted.'),
        ),
      );
    }
    if (this.#middlewares.length === 0) {
      const direct = this.#callDirect(name, toolCall, partial);
      if (direct !== undefined) return direct;
    }
    const cancellation = new CallCancellation();
    const rawArguments: unknown = toolCall?.arguments;
    let parsed: ReturnType<typeof parseToolArguments>;
    if (typeof rawArguments === 'string') parsed = parseToolArguments(rawArguments);
    else if (rawArguments === undefined || rawArguments === null)
      parsed = { ok: true, value: {}, repaired: true };
    else if (typeof rawArguments === 'object' && !Array.isArray(rawArguments)) {
      parsed = { ok: true, value: rawArguments as Record<string, unknown>, repaired: false };
    } else parsed = { ok: false, message: 'The arguments must be a JSON object string.' };
    const invocation: ToolInvocation & CallInternals = {
      [cancellationKey]: cancellation,
      toolCall,
      name,
      arguments: parsed.ok ? parsed.value : undefined,
      parseError: parsed.ok
        ? undefined
        : new ToolArgumentError(name, [{ path: [], message: parsed.message }]),
      tool: this.#tools.get(name),
      context: this.#context(toolCall, partial, cancellation),
    };
    return this.#drive(name, () => this.#handler(invocation), cancellation, partial.signal);
  }

  /**
   * The direct path of a call with no middleware whose arguments are valid: the tool runs at once,
   * and a plain value comes back as one chunk without any generator in between. Anything else
   * (an unknown tool, unreadable or invalid arguments, an aborted caller) returns `undefined` and
   * takes the general path, which reports it.
   */
  #callDirect(
    name: string,
    toolCall: ToolCall,
    partial: CallContext,
  ): AsyncIterable<ToolResponse> | undefined {
    const registered = this.#tools.get(name);
    const raw: unknown = toolCall?.arguments;
    if (registered === undefined || typeof raw !== 'string' || partial.signal?.aborted)
      return undefined;
    if (!this.isActive(name)) return undefined;
    const parsed = parseToolArguments(raw);
    if (!parsed.ok) return undefined;
    const validation = validateRegistered(registered, parsed.value);
    if (!validation.ok) return undefined;
    const value = validation.value;
    const cancellation = new CallCancellation();
    const context = this.#context(toolCall, partial, cancellation);
    const postprocess = registered.postprocess;
    const finish = postprocess
      ? (chunk: ToolResponse) => postprocess(chunk, { toolCall, arguments: value })
      : undefined;
    let result: unknown;
    try {
      result = registered.tool.execute(value, context);
    } catch (error) {
      return single(failure(name, error));
    }
    if (isPlainResult(result)) {
      try {
        let chunk = toToolResponse(result);
        if (finish) chunk = finish(chunk);
        // A chunk made here from a plain value is ours to mark; one the tool returned is copied.
        if (chunk !== result && !finish) chunk.isLast = true;
        return single(chunk);
      } catch (error) {
        return single(failure(name, error));
      }
    }
    // The tool started something asynchronous: stream it with the timeout and cancellation.
    return new ToolRun(
      name,
      result,
      cancellation,
      registered.timeoutMs ?? this.defaultTimeoutMs,
      finish,
      partial.signal,
      this.#inFlight,
    );
  }

  /**
   * Stream a call's chunks to the caller: link the caller's signal, track the call for `close()`,
   * and make sure exactly one chunk, the final one, carries `isLast`.
   */
  async *#drive(
    name: string,
    start: () => AsyncIterable<ToolResponse>,
    cancellation: CallCancellation,
    callerSignal: AbortSignal | undefined,
  ): AsyncGenerator<ToolResponse, void, undefined> {
    const relay = () => cancellation.abort(callerSignal?.reason);
    if (callerSignal) {
      if (callerSignal.aborted) cancellation.abort(callerSignal.reason);
      else callerSignal.addEventListener('abort', relay, { once: true });
    }
    this.#inFlight.add(cancellation);
    // Hold back a chunk marked last until the stream really ends, so exactly one chunk (the final
    // one) carries `isLast` even when a middleware appends after the tool's last chunk.
    let held: ToolResponse | undefined;
    let completed = false;
    try {
      for await (const raw of start()) {
        const chunk = toToolResponse(raw);
        if (held !== undefined) {
          yield { ...held, isLast: false };
          held = undefined;
        }
        if (chunk.isLast === true) held = chunk;
        else yield chunk;
      }
      completed = true;
      yield held ?? END_CHUNK;
    } catch (error) {
      // Only reachable through a broken async iterable returned by a middleware; still not a throw.
      if (held !== undefined) yield { ...held, isLast: false };
      yield failure(name, error);
    } finally {
      this.#inFlight.delete(cancellation);
      callerSignal?.removeEventListener('abort', relay);
      // The caller stopped reading (or a middleware broke) before the call ended: tell whatever
      // is still running to stop. A call that ran to its end is left alone (nothing is running).
      if (!completed && !cancellation.aborted) cancellation.abort(new ToolAbortedError(name));
    }
  }

  #context(toolCall: ToolCall, partial: CallContext, cancellation: CallCancellation): ToolContext {
    const context = new CallToolContext(
      cancellation,
      typeof toolCall?.id === 'string' ? toolCall.id : '',
      partial.files ?? [],
      partial.logger ?? this.logger,
      partial.state,
      partial.language ?? this.language,
    );
    // Optional fields stay absent rather than `undefined` (no conditional spreads: hot path).
    if (partial.workDir !== undefined) context.workDir = partial.workDir;
    if (partial.namespace !== undefined) context.namespace = partial.namespace;
    if (partial.streaming !== undefined) context.streaming = partial.streaming;
    return cancellation.attach(context);
  }

  /** The innermost layer: look the tool up, validate, run. */
  #execute(invocation: ToolInvocation): AsyncIterable<ToolResponse> {
    const name = invocation.name;
    const registered = this.#tools.get(name);
    if (registered === undefined || !this.isActive(name)) {
      return single(errorResponse(this.#notFound(name, registered)));
    }
    if (invocation.arguments === undefined) {
      return single(
        errorResponse(
          invocation.parseError ??
            new ToolArgumentError(name, [{ path: [], message: 'no arguments' }]),
        ),
      );
    }
    const validation = validateRegistered(registered, invocation.arguments);
    if (!validation.ok) {
      return single(
        errorResponse(
          new ToolArgumentError(name, validation.issues, {
            summary: `Invalid arguments for tool "${name}". Fix these fields and call it again:`,
          }),
        ),
      );
    }
    const value = validation.value;
    const postprocess = registered.postprocess;
    const context = invocation.context;
    const toolCall = invocation.toolCall;
    return runToolStream(
      name,
      () => registered.tool.execute(value, context),
      // The call's own cancellation, unless a middleware gave the tool another signal to follow.
      (invocation as ToolInvocation & Partial<CallInternals>)[cancellationKey]?.for(context) ??
        CallCancellation.following(context.signal),
      registered.timeoutMs ?? this.defaultTimeoutMs,
      postprocess ? (chunk) => postprocess(chunk, { toolCall, arguments: value }) : undefined,
    );
  }

  #notFound(name: string, registered: RegisteredTool | undefined): ToolNotFoundError {
    const available = this.list({ activeOnly: true }).map((tool) => tool.name);
    if (registered !== undefined) {
      const hint = this.#metaTool ? ` Equip it first with ${META_TOOL_NAME}.` : '';
      return new ToolNotFoundError(name, available, {
        reason: `Tool "${name}" belongs to the tool group "${registered.group}", which is not active.${hint}`,
      });
    }
    return new ToolNotFoundError(name, available);
  }

  /**
   * Whether this call must wait for a human's approval (the tool's `needsApproval` flag or
   * predicate). A predicate that throws counts as "needs approval": when in doubt, ask.
   */
  async requiresApproval(toolCall: ToolCall, context: CallContext = {}): Promise<boolean> {
    const registered = this.#tools.get(toolCall.name);
    if (!registered) return false;
    const rule = registered.tool.needsApproval;
    if (typeof rule === 'boolean') return rule;
    const parsed = parseToolArguments(
      typeof toolCall.arguments === 'string' ? toolCall.arguments : '{}',
    );
    if (!parsed.ok) return true;
    try {
      return Boolean(
        await rule(
          { ...parsed.value, ...registered.presetArgs },
          {
            signal: context.signal ?? new AbortController().signal,
            callId: toolCall.id,
            files: context.files ?? [],
            logger: context.logger ?? this.logger,
            state: context.state ?? new Map(),
          },
        ),
      );
    } catch (error) {
      this.logger.warn('needsApproval predicate threw; asking for approval', {
        tool: toolCall.name,
        error: errorMessage(error),
      });
      return true;
    }
  }

  // ---------------------------------------------------------------- state and lifecycle

  /** Which groups are active, to store with a conversation and restore with `importState`. */
  exportState(): ToolkitState {
    return {
      version: 1,
      activeGroups: [...this.#groups.values()]
        .filter((group) => group.active)
        .map((group) => group.name),
    };
  }

  /**
   * Restore which groups are active. Groups not named are deactivated.
   * @returns the named groups that do not exist in this toolkit
   * @throws QuiverError (code `configuration_invalid`) when the state is not a toolkit state
   */
  importState(state: ToolkitState): string[] {
    const parsed = toolkitStateSchema.safeParse(state);
    if (!parsed.success) {
      throw new QuiverError(
        'configuration_invalid',
        `Not a toolkit state: ${parsed.error.issues.map((issue) => issue.message).join('; ')}`,
      );
    }
    const wanted = new Set(parsed.data.activeGroups);
    for (const group of this.#groups.values())
      if (group.name !== BASIC_GROUP) group.active = wanted.has(group.name);
    return [...wanted].filter((name) => !this.#groups.has(name));
  }

  /** Run `hook` when the toolkit closes (used by tools that own processes or tasks). */
  onClose(hook: () => void | Promise<void>): void {
    this.#closeHooks.push(hook);
  }

  /** Abort every call in flight, run the close hooks, and refuse further calls. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const cancellation of this.#inFlight)
      cancellation.abort(new ToolExecutionError('', 'The toolkit was closed.'));
    for (const hook of this.#closeHooks.splice(0)) {
      try {
        await hook();
      } catch (error) {
        this.logger.warn('a toolkit close hook failed', { error: errorMessage(error) });
      }
    }
  }

  #assertOpen(): void {
    if (this.#closed) throw new ToolRegistrationError('', 'The toolkit is closed.');
  }
}

const toolkitStateSchema = z.object({ version: z.literal(1), activeGroups: z.array(z.string()) });

/** Where a call's invocation carries its cancellation (copied along when a middleware spreads it). */
const cancellationKey = Symbol('quiver.callCancellation');

interface CallInternals {
  [cancellationKey]: CallCancellation;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<ToolResponse> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/** Wrap a middleware so that whatever it throws, sync or mid-stream, becomes an error response. */
function guarded(middleware: ToolMiddleware, next: NextHandler): NextHandler {
  return async function* (invocation) {
    try {
      const returned = middleware(invocation, next);
      // An async middleware that ends with `return next(invocation)` resolves to a stream.
      const out: unknown = isAsyncIterable(returned) ? returned : await returned;
      if (isAsyncIterable(out)) yield* out;
      else yield asLast(toToolResponse(out));
    } catch (error) {
      const name = middleware.name || 'anonymous';
      yield failure(
        invocation.name,
        new ToolExecutionError(
          invocation.name,
          `Middleware "${name}" failed while handling "${invocation.name}": ${errorMessage(error)}`,
          {
            cause: error,
          },
        ),
      );
    }
  };
}

function withoutPresets(schema: JsonSchemaObject, keys: string[]): JsonSchemaObject {
  const properties = { ...schema.properties };
  for (const key of keys) delete properties[key];
  const required = schema.required?.filter((key) => !keys.includes(key));
  return { ...schema, properties, ...(required ? { required } : {}) };
}
