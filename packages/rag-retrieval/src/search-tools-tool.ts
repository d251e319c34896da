import { ToolArgumentError, type ToolContext, type ToolResponse } from '@quiver/core';
import { BASIC_GROUP, defineTool, type Tool, type Toolkit } from '@quiver/core-registry';
import { z } from 'zod';
import {
  ToolSearchIndex,
  summarizeDescription,
  type ToolSearchIndexOptions,
} from './tool-search.js';

/** The group {@link createSearchToolsTool} moves individually activated tools into. */
export const SEARCHED_TOOLS_GROUP = 'searched_tools';

/** Options of {@link createSearchToolsTool}. */
export interface SearchToolsOptions extends ToolSearchIndexOptions {
  /** The toolkit whose tools are searched and activated. */
  toolkit: Toolkit;
  /** Tool name. Default `search_tools`. */
  name?: string;
  /** Tools listed per search. Default 5. */
  topK?: number;
  /**
   * How a chosen tool is activated. `tool` (default): just that tool, by moving its registration
   * (same options) into the active `searched_tools` group. `group`: activate the tool's whole group.
   */
  activation?: 'tool' | 'group';
}

const parameters = z.object({
  query: z
    .string()
    .optional()
    .describe('The task you need a tool for, in plain words. 用自然语言描述需要工具完成的任务。'),
  activate: z
    .array(z.string())
    .optional()
    .describe(
      'Names of tools (from a previous search) to make available now. 要启用的工具名（来自之前的搜索结果）。',
    ),
  limit: z
    .number()
    .int()
    .min(1)
    .max(20)
    .optional()
    .describe('How many tools to list. Default 5. 列出的工具数量。'),
});

/**
 * The `search_tools` meta tool: an agent starts with a handful of tools and finds the rest. With
 * `query` it ranks every registered tool (active or not) by hybrid search over names, descriptions
 * and parameter descriptions; with `activate` it makes the chosen tools available for the next turn.
 *
 * @example
 * ```ts
 * toolkit.register(createSearchToolsTool({ toolkit }));
 * // model: search_tools({ query: 'create an issue in a GitHub repository' }) → ranked list
 * // model: search_tools({ activate: ['create_issue'] }) → create_issue is now in its tool list
 * ```
 */
export function createSearchToolsTool(
  options: SearchToolsOptions,
): Tool<z.infer<typeof parameters>> {
  const index = new ToolSearchIndex(options);
  const toolkit = options.toolkit;
  const name = options.name ?? 'search_tools';
  return defineTool({
    name,
    description: {
      en: 'Find tools you do not have yet. Give `query` (the task in plain words) to list the best matching tools, active or not; then give `activate` with the names you want to use, and they become available. Call it whenever no tool in your list fits the task.',
      zh: '查找你尚未拥有的工具。提供 `query`（用自然语言描述任务）可列出最匹配的工具（无论是否已启用）；再用 `activate` 传入想使用的工具名即可启用它们。当现有工具都不适合任务时调用。',
    },
    parameters,
    flags: { deterministic: false },
    async execute(args, context: ToolContext): Promise<ToolResponse> {
      const language = context.language ?? toolkit.language;
      const zh = language === 'zh';
      if (!args.query?.trim() && !(args.activate && args.activate.length > 0)) {
        throw new ToolArgumentError(name, [
          {
            path: ['query'],
            message: 'Give `query` (the task in plain words) or `activate` (tool names to enable).',
          },
        ]);
      }
      const sections: string[] = [];
      const activated: string[] = [];
      const unknown: string[] = [];
      for (const toolName of args.activate ?? []) {
        if (toolName === name || !toolkit.has(toolName)) unknown.push(toolName);
        else {
          activate(toolkit, toolName, options.activation ?? 'tool');
          activated.push(toolName);
        }
      }
      if (activated.length > 0)
        sections.push(`${zh ? '已启用' : 'Activated'}: ${activated.join(', ')}`);
      if (unknown.length > 0) {
        sections.push(
          `${zh ? '没有这些工具' : 'No such tools'}: ${unknown.join(', ')}. ${zh ? '请先用 query 搜索。' : 'Search with `query` first.'}`,
        );
      }
      let results: { name: string; active: boolean; group: string; score: number }[] = [];
      if (args.query?.trim()) {
        const candidates = toolkit.list().filter((registered) => registered.name !== name);
        const tools = candidates.map((registered) => ({
          name: registered.name,
          description: registered.description,
          parameters: registered.modelParameters,
          group: registered.group,
        }));
        const hits = await index.search(tools, args.query, args.limit ?? options.topK ?? 5, {
          signal: context.signal,
        });
        results = hits.map((hit) => ({
          name: hit.name,
          active: toolkit.isActive(hit.name),
          group: toolkit.get(hit.name)?.group ?? hit.group ?? BASIC_GROUP,
          score: hit.score,
        }));
        const lines = results.map((result, i) => {
          const registered = toolkit.get(result.name)!;
          const parameterNames = Object.keys(
            (registered.modelParameters as { properties?: Record<string, unknown> }).properties ??
              {},
          );
          const state = result.active ? (zh ? '已启用' : 'active') : zh ? '未启用' : 'inactive';
          return `${i + 1}. ${result.name} [${state}] — ${summarizeDescription(registered.description, language)}${
            parameterNames.length > 0
              ? ` (${zh ? '参数' : 'parameters'}: ${parameterNames.join(', ')})`
              : ''
          }`;
        });
        sections.push(
          lines.length > 0
            ? `${zh ? '匹配的工具' : 'Matching tools'}:\n${lines.join('\n')}\n${
                zh
                  ? '用 activate 启用需要的未启用工具。'
                  : 'Activate the inactive ones you need with `activate`.'
              }`
            : zh
              ? '没有匹配的工具。'
              : 'No matching tools.',
        );
      }
      return {
        content: [{ type: 'text', text: sections.join('\n\n') }],
        metadata: { results, activated, unknown },
      };
    },
  });
}

function activate(toolkit: Toolkit, toolName: string, mode: 'tool' | 'group'): void {
  if (toolkit.isActive(toolName)) return;
  const registered = toolkit.get(toolName)!;
  if (mode === 'group') {
    toolkit.activateGroups([registered.group]);
    return;
  }
  // The Toolkit activates whole groups; one tool is activated by re-registering it, with the same
  // options, in an always-active group of its own.
  if (!toolkit.groups().some((group) => group.name === SEARCHED_TOOLS_GROUP)) {
    toolkit.createGroup({
      name: SEARCHED_TOOLS_GROUP,
      description: 'Tools activated through search_tools.',
      active: true,
    });
  } else {
    toolkit.activateGroups([SEARCHED_TOOLS_GROUP]);
  }
  toolkit.unregister(toolName);
  toolkit.register(registered.tool, {
    group: SEARCHED_TOOLS_GROUP,
    name: registered.name,
    description: registered.description,
    ...(registered.presetArgs ? { presetArgs: { ...registered.presetArgs } } : {}),
    ...(registered.postprocess ? { postprocess: registered.postprocess } : {}),
    ...(registered.timeoutMs !== undefined ? { timeoutMs: registered.timeoutMs } : {}),
  });
}
