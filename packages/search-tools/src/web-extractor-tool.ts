import { textBlock, type ToolContext, type ToolResponse } from '@quiver/core';
import { defineTool, type Tool, type ToolFactory } from '@quiver/core-registry';
import { z } from 'zod';
import {
  createWebExtractor,
  type ExtractedPage,
  type WebExtractor,
  type WebExtractorOptions,
} from './web-extractor.js';

/** Options of {@link createWebExtractorTool}. */
export interface WebExtractorToolOptions extends WebExtractorOptions {
  /** Use this extractor (and its lifecycle) instead of creating one. */
  extractor?: WebExtractor;
  /** Most characters of page text given to the model (default 20 000). */
  maxChars?: number;
  /** Most links listed after the text (default 40). */
  maxLinks?: number;
}

const parameters = z.object({
  url: z
    .string()
    .min(1)
    .max(4096)
    .describe('The full http(s) URL of the page or document to read.'),
});

/** Arguments of the `web_extractor` tool. */
export type WebExtractorArguments = z.infer<typeof parameters>;

/**
 * The `web_extractor` tool: fetches a URL and returns its main content as Markdown-like text
 * (title, final and canonical URL, text, outgoing links). HTML pages lose their navigation,
 * scripts and boilerplate; PDF, DOCX, PPTX, XLSX and CSV go through the document parser.
 * Private-network addresses are refused (SSRF guard).
 *
 * @param options - Extractor options, output limits.
 * @returns A tool for a Toolkit.
 * @example
 * toolkit.register(createWebExtractorTool({ documentParser }));
 */
export function createWebExtractorTool(
  options: WebExtractorToolOptions = {},
): Tool<WebExtractorArguments> {
  const extractor = options.extractor ?? createWebExtractor(options);
  const maxChars = options.maxChars ?? 20_000;
  const maxLinks = options.maxLinks ?? 40;
  return defineTool({
    name: 'web_extractor',
    description: {
      en: 'Read a web page or online document (PDF, Word, PowerPoint, Excel, CSV) and return its main content as clean Markdown-like text with its title, URL and outgoing links. Use it to read a search result in full or a URL the user gave.',
      zh: '读取网页或在线文档（PDF、Word、PowerPoint、Excel、CSV），以简洁的类 Markdown 文本返回正文，并附标题、网址和正文中的链接。用于完整阅读某个搜索结果或用户给出的网址。',
    },
    parameters,
    flags: { networkAccess: true },
    timeoutMs: 45_000,
    async execute(args, context: ToolContext): Promise<ToolResponse> {
      const page = await extractor.extract(args.url, { signal: context.signal });
      return {
        content: [textBlock(formatPage(page, maxChars, maxLinks, context.language === 'zh'))],
        metadata: {
          url: page.url,
          finalUrl: page.finalUrl,
          ...(page.canonicalUrl !== undefined ? { canonicalUrl: page.canonicalUrl } : {}),
          title: page.title,
          format: page.format,
          ...(page.charset !== undefined ? { charset: page.charset } : {}),
          truncated: page.truncated,
          links: page.links,
        },
      };
    },
  });
}

function formatPage(
  page: ExtractedPage,
  maxChars: number,
  maxLinks: number,
  chinese: boolean,
): string {
  const lines: string[] = [`# ${page.title || page.finalUrl}`, `URL: ${page.finalUrl}`];
  if (page.canonicalUrl !== undefined && page.canonicalUrl !== page.finalUrl)
    lines.push(`Canonical URL: ${page.canonicalUrl}`);
  if (page.publishedAt !== undefined)
    lines.push(`${chinese ? '发布时间' : 'Published'}: ${page.publishedAt}`);
  if (page.truncated) {
    lines.push(
      chinese
        ? '注意：页面超过大小上限，只读取了开头部分。'
        : 'Note: the page is larger than the size limit; only its beginning was read.',
    );
  }
  let text = page.text;
  if (text.length > maxChars) {
    const rest = text.length - maxChars;
    text = `${text.slice(0, maxChars)}\n\n${chinese ? `[……还有 ${rest} 个字符未显示]` : `[… ${rest} more characters not shown]`}`;
  }
  lines.push(
    '',
    text === '' ? (chinese ? '（页面没有可读的正文）' : '(The page has no readable text.)') : text,
  );
  if (page.links.length > 0) {
    lines.push('', chinese ? '## 链接' : '## Links');
    for (const link of page.links.slice(0, maxLinks))
      lines.push(`- ${link.text ? `${link.text}: ` : ''}${link.url}`);
    if (page.links.length > maxLinks)
      lines.push(
        chinese
          ? `- ……另有 ${page.links.length - maxLinks} 个链接`
          : `- … ${page.links.length - maxLinks} more`,
      );
  }
  return lines.join('\n');
}

/** Registry factory for `web_extractor`. */
export const webExtractorToolFactory: ToolFactory<WebExtractorToolOptions> = {
  name: 'web_extractor',
  create: (config) => createWebExtractorTool(config),
};
