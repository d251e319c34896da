import type { RetrievalResult, Retriever, ToolContext, ToolResponse } from '@quiver/core';
import { defineTool, type Tool } from '@quiver/core-registry';
import { z } from 'zod';
import { DocumentRetriever } from './document-retriever.js';

/** Options of {@link createRetrievalTool}. */
export interface RetrievalToolOptions {
  /** Answers the searches. Default: a new {@link DocumentRetriever} (doc-parser, in-memory knowledge base, offline embedder). */
  retriever?: Retriever;
  /** Tool name. Default `retrieval`. */
  name?: string;
  /** Snippets returned. Default 8. */
  topK?: number;
  /** Token budget of the snippets. Default 4000. */
  maxRefTokens?: number;
  /** Time limit of a call (parsing large files takes a while). Default 120,000 ms. */
  timeoutMs?: number;
}

const parameters = z.object({
  query: z
    .string()
    .describe(
      'What to look for: a question or keywords, in the language of the documents. 要查找的内容：问题或关键词。',
    ),
  files: z
    .array(z.string())
    .optional()
    .describe(
      'Paths or URLs of the documents to search (PDF, Word, PowerPoint, Excel, HTML, Markdown, text). Default: the files attached to the conversation. 要检索的文档路径或 URL；默认使用对话中附带的文件。',
    ),
});

/**
 * The `retrieval` tool: searches the given documents (or the conversation's files) and returns the
 * most relevant snippets, each with its source and page. New and changed files are indexed on the
 * way (unchanged files are not parsed again).
 *
 * @example
 * ```ts
 * const toolkit = new Toolkit();
 * toolkit.register(createRetrievalTool()); // or { retriever: new DocumentRetriever({ knowledgeBase }) }
 * ```
 */
export function createRetrievalTool(
  options: RetrievalToolOptions = {},
): Tool<z.infer<typeof parameters>> {
  let retriever = options.retriever;
  return defineTool({
    name: options.name ?? 'retrieval',
    description: {
      en: "Search documents (PDF, Word, PowerPoint, Excel, HTML, Markdown, text) for passages relevant to a query, by keyword and meaning. Returns ranked snippets with their source file and page. Use it to answer questions from the user's files; quote the source and page.",
      zh: '在文档（PDF、Word、PowerPoint、Excel、HTML、Markdown、文本）中检索与查询相关的段落（关键词与语义结合），返回按相关度排序的片段及其来源文件和页码。用于根据用户文件回答问题，请注明来源和页码。',
    },
    parameters,
    // Not deterministic: the same query gives other results when the files change.
    flags: { fileAccess: true, networkAccess: true },
    timeoutMs: options.timeoutMs ?? 120_000,
    async execute(args, context: ToolContext): Promise<ToolResponse> {
      const files = args.files && args.files.length > 0 ? args.files : context.files;
      retriever ??= new DocumentRetriever();
      const result = await retriever.retrieve({
        query: args.query,
        ...(files.length > 0 ? { files } : {}),
        topK: options.topK ?? 8,
        maxTokens: options.maxRefTokens ?? 4000,
        signal: context.signal,
      });
      return {
        content: [{ type: 'text', text: formatResult(result, context.language) }],
        metadata: {
          warnings: result.warnings,
          results: result.chunks.map((chunk) => ({
            chunkId: chunk.chunkId,
            source: chunk.source,
            page: chunk.page,
            score: chunk.score,
          })),
        },
      };
    },
  });
}

/** Snippets as the model reads them: `[n] source, page p (Heading › Sub)` then the text. */
function formatResult(result: RetrievalResult, language: ToolContext['language']): string {
  const zh = language === 'zh';
  const parts: string[] = [];
  result.chunks.forEach((chunk, i) => {
    const where = [
      chunk.source,
      chunk.page !== undefined ? (zh ? `第 ${chunk.page} 页` : `page ${chunk.page}`) : undefined,
    ]
      .filter(Boolean)
      .join(', ');
    const heading =
      chunk.headingPath && chunk.headingPath.length > 0
        ? ` (${chunk.headingPath.join(' › ')})`
        : '';
    parts.push(`[${i + 1}] ${where}${heading}\n${chunk.text}`);
  });
  if (parts.length === 0)
    parts.push(zh ? '没有找到相关内容。' : 'No relevant passages were found.');
  if (result.warnings.length > 0) {
    parts.push(
      `${zh ? '注意' : 'Warnings'}:\n${result.warnings.map((warning) => `- ${warning}`).join('\n')}`,
    );
  }
  return parts.join('\n\n');
}
