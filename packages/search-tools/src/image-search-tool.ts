import { textBlock, type ToolContext, type ToolResponse } from '@quiver/core';
import { defineTool, type Tool, type ToolFactory } from '@quiver/core-registry';
import { z } from 'zod';
import { createWebSearch, type WebSearch } from './web-search.js';
import type { WebSearchToolOptions } from './web-search-tool.js';

const parameters = z.object({
  query: z.string().min(1).max(400).describe('What the images should show.'),
  count: z
    .number()
    .int()
    .min(1)
    .max(30)
    .optional()
    .describe('How many images to return (default 8).'),
});

/** Arguments of the `image_search` tool. */
export type ImageSearchArguments = z.infer<typeof parameters>;

/**
 * The `image_search` tool: finds images with the configured providers that support it (SearXNG,
 * Brave, Tavily, Serper, Bing) and lists image URL, size, thumbnail and source page.
 *
 * @param options - A search client, or options for `createWebSearch`.
 * @returns A tool for a Toolkit.
 * @throws {ConfigurationError} naming the environment variable to set when a provider lacks a key.
 * @example
 * toolkit.register(createImageSearchTool({ providers: ['serper'] }));
 */
export function createImageSearchTool(
  options: WebSearchToolOptions = {},
): Tool<ImageSearchArguments> {
  const search: WebSearch = options.search ?? createWebSearch(options);
  return defineTool({
    name: 'image_search',
    description: {
      en: 'Search the web for images. Returns image URLs with size, thumbnail and the page each image comes from. Use it when the user wants pictures, diagrams or photos of something.',
      zh: '在互联网上搜索图片。返回图片网址、尺寸、缩略图以及图片所在的网页。当用户需要某样东西的图片、示意图或照片时使用。',
    },
    parameters,
    flags: { networkAccess: true },
    timeoutMs: 30_000,
    async execute(args, context: ToolContext): Promise<ToolResponse> {
      const response = await search.searchImages(args.query, {
        ...(args.count !== undefined ? { count: args.count } : {}),
        signal: context.signal,
      });
      const chinese = context.language === 'zh';
      const lines: string[] = [];
      if (response.results.length === 0) {
        lines.push(
          chinese
            ? `没有找到与“${response.query}”相关的图片。`
            : `No images for "${response.query}".`,
        );
      } else {
        lines.push(
          chinese ? `“${response.query}”的图片搜索结果：` : `Images for "${response.query}":`,
        );
        response.results.forEach((image, index) => {
          const size =
            image.width !== undefined && image.height !== undefined
              ? ` (${image.width}×${image.height})`
              : '';
          lines.push(
            '',
            `${index + 1}. ${image.title || image.imageUrl}${size}`,
            `   ${chinese ? '图片' : 'Image'}: ${image.imageUrl}`,
          );
          if (image.pageUrl !== undefined)
            lines.push(`   ${chinese ? '网页' : 'Page'}: ${image.pageUrl}`);
          if (image.thumbnailUrl !== undefined)
            lines.push(`   ${chinese ? '缩略图' : 'Thumbnail'}: ${image.thumbnailUrl}`);
          lines.push(`   ${chinese ? '来自' : 'via'} ${image.source}`);
        });
      }
      for (const failure of response.failures) {
        lines.push(
          '',
          `${chinese ? '注意' : 'Note'}: ${failure.provider} ${chinese ? '查询失败' : 'failed'} (${failure.message}).`,
        );
      }
      return {
        content: [textBlock(lines.join('\n'))],
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

/** Registry factory for `image_search`. */
export const imageSearchToolFactory: ToolFactory<WebSearchToolOptions> = {
  name: 'image_search',
  create: (config) => createImageSearchTool(config),
};
