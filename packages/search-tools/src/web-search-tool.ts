import { textBlock, type ToolContext, type ToolResponse } from '@quiver/core';
import { defineTool, type Tool, type ToolFactory } from '@quiver/core-registry';
import { z } from 'zod';
import type { SearchResult } from './search-types.js';
import {
  createWebSearch,
  type SearchResponse,
  type WebSearch,
  type WebSearchOptions,
} from './web-search.js';

/** Options of {@link createWebSearchTool}: a ready {@link WebSearch}, or options to make one. */
export interface WebSearchToolOptions extends WebSearchOptions {
  /** Use this search client (its providers, cache and lifecycle) instead of creating one. */
  search?: WebSearch;
}

const parameters = z.object({
  query: z
    .string()
    .min(1)
    .max(400)
    .describe('What to search for: a few keywords or a short question.'),
  count: z
    .number()
    .int()
    .min(1)
    .max(20)
    .optional()
    .describe('How many results to return (default 8).'),
  freshness: z
    .enum(['day', 'week', 'month', 'year'])
    .optional()
    .describe('Only results published within this period; leave out for any time.'),
  language: z
    .string()
    .min(2)
    .max(10)
    .optional()
    .describe('Result language code, e.g. "en" or "zh".'),
});

/** Arguments of the `web_search` tool. */
export type WebSearchArguments = z.infer<typeof parameters>;

/**
 * The `web_search` tool: searches the configured providers and returns a numbered list of
 * results (title, URL, snippet, date, provider) as text, with the structured results in
 * `metadata.results`.
 *
 * @param options - A search client, or options for {@link createWebSearch}.
 * @returns A tool for a Toolkit.
 * @throws {ConfigurationError} naming the environment variable to set when a provider lacks a key.
 * @example
 * const toolkit = new Toolkit();
 * toolkit.register(createWebSearchTool({ providers: ['searxng'] }));
 */
export function createWebSearchTool(options: WebSearchToolOptions = {}): Tool<WebSearchArguments> {
  const search = options.search ?? createWebSearch(options);
  return defineTool({
    name: 'web_search',
    description: {
      en: 'Search the web and get a ranked list of results (title, URL, snippet, publication date). Use it for current events, facts you are unsure of, or to find sources; then read a promising page in full with web_extractor.',
      zh: '搜索互联网，返回排序后的结果列表（标题、网址、摘要、发布日期）。用于查询时事、核实不确定的事实或寻找资料来源；需要阅读全文时，再用 web_extractor 打开相应网页。',
    },
    parameters,
    flags: { networkAccess: true },
    timeoutMs: 30_000,
    async execute(args, context: ToolContext): Promise<ToolResponse> {
      const response = await search.search(args.query, {
        ...(args.count !== undefined ? { count: args.count } : {}),
        ...(args.freshness !== undefined ? { freshness: args.freshness } : {}),
        ...(args.language !== undefined ? { language: args.language } : {}),
        signal: context.signal,
      });
      return {
        content: [textBlock(formatResults(response, context.language === 'zh'))],
        metadata: {
          results: response.results,
          providers: response.providers,
          failures: response.failures,
          cached: response.cached,
        },
      };
    },
  });
}

function formatResults(response: SearchResponse<SearchResult>, chinese: boolean): string {
  const lines: string[] = [];
  if (response.results.length === 0) {
    lines.push(
      chinese ? `没有找到与“${response.query}”相关的结果。` : `No results for "${response.query}".`,
    );
  } else {
    lines.push(
      chinese
        ? `“${response.query}”的搜索结果（来源：${response.providers.join('、')}）：`
        : `Search results for "${response.query}" (from ${response.providers.join(', ')}):`,
    );
    response.results.forEach((result, index) => {
      lines.push('', `${index + 1}. ${result.title}`, `   ${result.url}`);
      if (result.snippet !== '') lines.push(`   ${result.snippet}`);
      const published =
        result.publishedAt === undefined
          ? ''
          : `${chinese ? '发布' : 'Published'}: ${result.publishedAt.slice(0, 10)} · `;
      lines.push(`   ${published}${chinese ? '来自' : 'via'} ${result.source}`);
    });
  }
  for (const failure of response.failures) {
    lines.push(
      '',
      chinese
        ? `注意：${failure.provider} 查询失败（${failure.message}），以上结果来自其他搜索源。`
        : `Note: ${failure.provider} failed (${failure.message}); the results above come from the other providers.`,
    );
  }
  return lines.join('\n');
}

/**
 * Registry factory for `web_search` (`registerTool(webSearchToolFactory)`, then
 * `getTool('web_search', { providers: ['brave'] })`).
 */
export const webSearchToolFactory: ToolFactory<WebSearchToolOptions> = {
  name: 'web_search',
  create: (config) => createWebSearchTool(config),
};
