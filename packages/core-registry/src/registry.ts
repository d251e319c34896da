import { readFile } from 'node:fs/promises';
import { ConfigurationError, ToolRegistrationError } from '@quiver/core';
import type { AnyTool } from './define-tool.js';
import { isTool } from './define-tool.js';

/**
 * Builds configured instances of a tool (Qwen-Agent's `TOOL_REGISTRY` entry): e.g. a search tool
 * that needs an API key, or a storage tool that needs a root folder.
 */
export interface ToolFactory<TConfig = Record<string, unknown>> {
  name: string;
  /** Build a tool from its configuration; validate the configuration here and throw ConfigurationError. */
  create(config: TConfig): AnyTool;
}

/** A factory of any configuration type (its `create` takes its own config type). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a factory's config type is its own business
export type AnyToolFactory = ToolFactory<any>;

/** Per-tool configuration, by tool name (what a tool config JSON file holds). */
export type ToolConfigMap = Record<string, Record<string, unknown>>;

/**
 * A registry of tools and tool factories by name: the equivalent of Qwen-Agent's
 * `@register_tool` / `TOOL_REGISTRY`, with configured instances built by `getTool`.
 */
export class ToolRegistry {
  readonly #entries = new Map<string, AnyTool | AnyToolFactory>();
  #config: ToolConfigMap = {};

  /**
   * Add a tool or a factory under its name.
   * @throws ToolRegistrationError when the name is taken (pass `{ override: true }` to replace)
   */
  register(entry: AnyTool | AnyToolFactory, options: { override?: boolean } = {}): void {
    if (
      !isTool(entry) &&
      (typeof entry !== 'object' || entry === null || typeof entry.create !== 'function')
    ) {
      throw new ToolRegistrationError(
        '',
        'registerTool takes a tool made by defineTool or a factory { name, create(config) }.',
      );
    }
    if (this.#entries.has(entry.name) && !options.override) {
      throw new ToolRegistrationError(
        entry.name,
        `A tool named "${entry.name}" is already in the registry. Pass { override: true } to replace it.`,
      );
    }
    this.#entries.set(entry.name, entry);
  }

  /** Names of everything registered. */
  names(): string[] {
    return [...this.#entries.keys()];
  }

  /** True when a tool or factory of that name is registered. */
  has(name: string): boolean {
    return this.#entries.has(name);
  }

  /**
   * Get a tool by name. A factory is called with `config`, or else with the configuration loaded
   * for that name (`loadConfig`), or `{}`.
   * @throws ConfigurationError when the name is unknown or the factory rejects the configuration
   */
  getTool(name: string, config?: Record<string, unknown>): AnyTool {
    const entry = this.#entries.get(name);
    if (!entry) {
      const known = this.names();
      throw new ConfigurationError(
        `No tool named "${name}" is registered.${known.length ? ` Registered: ${known.join(', ')}.` : ''} Register it with registerTool() first.`,
      );
    }
    if (isTool(entry)) return entry;
    const effective = config ?? this.#config[name] ?? {};
    try {
      const tool = entry.create(effective);
      if (!isTool(tool)) throw new Error('the factory did not return a tool made by defineTool');
      return tool;
    } catch (error) {
      if (error instanceof ConfigurationError) throw error;
      throw new ConfigurationError(
        `Could not create tool "${name}": ${error instanceof Error ? error.message : String(error)}`,
        {
          cause: error,
        },
      );
    }
  }

  /** Set per-tool configuration used by `getTool` when no config is passed. */
  setConfig(config: ToolConfigMap): void {
    this.#config = { ...config };
  }

  /**
   * Load per-tool configuration from a JSON file: `{ "tools": { "<name>": { ... } } }` or
   * `{ "<name>": { ... } }`.
   * @throws ConfigurationError when the file is missing or is not such an object
   */
  async loadConfig(path: string): Promise<ToolConfigMap> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      throw new ConfigurationError(
        `Cannot read the tool config file ${path}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (error) {
      throw new ConfigurationError(
        `The tool config file ${path} is not valid JSON: ${(error as Error).message}`,
        { cause: error },
      );
    }
    const map = isRecord(data) && isRecord(data.tools) ? data.tools : data;
    if (!isRecord(map) || !Object.values(map).every(isRecord)) {
      throw new ConfigurationError(
        `The tool config file ${path} must map tool names to objects, e.g. {"tools": {"web_search": {"provider": "searxng"}}}.`,
      );
    }
    this.setConfig(map as ToolConfigMap);
    return this.#config;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The process-wide default registry. */
export const defaultRegistry = new ToolRegistry();

/** Register a tool or factory in the default registry (Qwen-Agent's `@register_tool`). */
export function registerTool(
  entry: AnyTool | AnyToolFactory,
  options?: { override?: boolean },
): void {
  defaultRegistry.register(entry, options);
}

/** Get a (configured) tool from the default registry. */
export function getTool(name: string, config?: Record<string, unknown>): AnyTool {
  return defaultRegistry.getTool(name, config);
}
