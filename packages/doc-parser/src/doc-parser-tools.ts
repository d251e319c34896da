import { isAbsolute, relative, resolve } from 'node:path';
import type { ToolContext, ToolResponse } from '@quiver/core';
import { ToolArgumentError } from '@quiver/core';
import { defineTool, type Tool } from '@quiver/core-registry';
import { z } from 'zod';
import { chunkDocument } from './chunk-document.js';
import { parseDocument } from './parse-document.js';
import type { ParseDocumentOptions } from './parse-options.js';
import { countTokens, splitByTokens } from './tokenizer.js';

/** Options of {@link createDocParserTool} and {@link createSimpleDocParserTool}. */
export interface DocParserToolOptions {
  /** Defaults for every parse (limits, cache directory, `fetch`); `signal` comes from the call. */
  parseOptions?: Omit<ParseDocumentOptions, 'signal' | 'filename' | 'format'>;
  /**
   * Directories files may be read from. Relative paths resolve against the first one (else
   * `context.workDir`, else the process's working directory). Default: no restriction.
   */
  allowedDirectories?: string[];
  /** Allow `http(s)://` URLs. Default true. */
  allowUrls?: boolean;
  /** Most tokens of document text one call returns to the model. Default 20 000. */
  maxOutputTokens?: number;
  /** Per-call time limit (ms). Default 120 000. */
  timeoutMs?: number;
}

const fileArgument = z
  .string()
  .min(1)
  .describe(
    'Path of a local file, an http(s) URL, or the name of a file the user attached. 本地文件路径、http(s) 链接或用户上传的文件名。',
  );

/**
 * Build the `doc_parser` tool: parses a document and returns it as token-bounded chunks, each
 * labelled with page and section, for question answering over long documents. The response
 * text lists the chunks (up to `maxOutputTokens`); `metadata.document` has title, format,
 * pages and tokens, `metadata.chunks` every chunk with its source, page and heading path.
 *
 * @param options - Parse defaults, allowed directories, URL policy, output budget.
 * @returns A tool to register in a `Toolkit`.
 * @example
 * ```ts
 * const toolkit = new Toolkit();
 * toolkit.register(createDocParserTool({ allowedDirectories: ['/srv/uploads'] }));
 * ```
 */
export function createDocParserTool(
  options: DocParserToolOptions = {},
): Tool<{ file: string; maxTokens?: number; overlap?: number }> {
  return defineTool({
    name: 'doc_parser',
    description: {
      en: 'Parse a document (PDF, Word .docx, PowerPoint .pptx, Excel .xlsx, CSV, HTML, Markdown, text, JSON) into chunks labelled with page number and section headings. Use it to read a file or URL before answering questions about it; tables come back as rows.',
      zh: '解析文档（PDF、Word .docx、PowerPoint .pptx、Excel .xlsx、CSV、HTML、Markdown、纯文本、JSON），按页码和章节标题切分为文本块。回答关于某个文件或网址的问题前先用它读取内容；表格按行返回。',
    },
    parameters: z.object({
      file: fileArgument,
      maxTokens: z
        .number()
        .int()
        .min(64)
        .max(4096)
        .optional()
        .describe('Tokens per chunk (default 512). 每个文本块的最大 token 数（默认 512）。'),
      overlap: z
        .number()
        .int()
        .min(0)
        .max(512)
        .optional()
        .describe(
          'Tokens repeated between neighbouring chunks (default 64). 相邻文本块重叠的 token 数（默认 64）。',
        ),
    }),
    flags: { fileAccess: true, networkAccess: options.allowUrls !== false, deterministic: true },
    timeoutMs: options.timeoutMs ?? 120_000,
    async execute(args, context): Promise<ToolResponse> {
      const document = await parseDocument(resolveFile('doc_parser', args.file, context, options), {
        ...options.parseOptions,
        signal: context.signal,
      });
      const maxTokens = args.maxTokens ?? 512;
      const chunks = chunkDocument(document, {
        maxTokens,
        overlap: Math.min(args.overlap ?? 64, maxTokens - 1),
      });
      const budget = options.maxOutputTokens ?? 20_000;
      const header = `# ${document.title}\nformat: ${document.format}, pages: ${document.pages.length}, tokens: ${document.tokenCount}, chunks: ${chunks.length}`;
      const parts = [header];
      let used = countTokens(header);
      let shown = 0;
      for (const chunk of chunks) {
        const label = `[chunk ${chunk.index + 1}/${chunks.length} · page ${chunk.page}${chunk.headingPath.length > 0 ? ` · ${chunk.headingPath.join(' > ')}` : ''}]`;
        const cost = chunk.tokenCount + countTokens(label) + 2;
        if (used + cost > budget) break;
        parts.push(`${label}\n${chunk.text}`);
        used += cost;
        shown += 1;
      }
      if (shown < chunks.length) {
        parts.push(
          `[${chunks.length - shown} more chunks not shown (output limit ${budget} tokens). 还有 ${chunks.length - shown} 个文本块未显示。]`,
        );
      }
      const warnings = (document.metadata.warnings as string[] | undefined) ?? [];
      if (warnings.length > 0) parts.push(`Warnings: ${warnings.join(' ')}`);
      return {
        content: [{ type: 'text', text: parts.join('\n\n') }],
        metadata: {
          document: {
            title: document.title,
            format: document.format,
            source: document.source,
            pages: document.pages.length,
            tokenCount: document.tokenCount,
            warnings,
          },
          chunks,
        },
      };
    },
  });
}

/**
 * Build the `simple_doc_parser` tool: the document's plain text (Markdown-style headings,
 * lists and tables), cut at `maxOutputTokens` with a note when longer.
 *
 * @param options - Parse defaults, allowed directories, URL policy, output budget.
 * @returns A tool to register in a `Toolkit`.
 * @example
 * ```ts
 * toolkit.register(createSimpleDocParserTool());
 * await toolkit.callToCompletion({ id: '1', name: 'simple_doc_parser', arguments: '{"file":"notes.docx"}' });
 * ```
 */
export function createSimpleDocParserTool(
  options: DocParserToolOptions = {},
): Tool<{ file: string }> {
  return defineTool({
    name: 'simple_doc_parser',
    description: {
      en: 'Extract the plain text of a document (PDF, .docx, .pptx, .xlsx, CSV, HTML, Markdown, text, JSON) from a file path or URL. Use it to read a whole short document; for long documents prefer doc_parser.',
      zh: '从文件路径或网址提取文档（PDF、.docx、.pptx、.xlsx、CSV、HTML、Markdown、纯文本、JSON）的纯文本。适合读取较短的完整文档；长文档请使用 doc_parser。',
    },
    parameters: z.object({ file: fileArgument }),
    flags: { fileAccess: true, networkAccess: options.allowUrls !== false, deterministic: true },
    timeoutMs: options.timeoutMs ?? 120_000,
    async execute(args, context): Promise<ToolResponse> {
      const document = await parseDocument(
        resolveFile('simple_doc_parser', args.file, context, options),
        {
          ...options.parseOptions,
          signal: context.signal,
        },
      );
      const budget = options.maxOutputTokens ?? 20_000;
      let text = document.text;
      if (document.tokenCount > budget) {
        text = `${splitByTokens(text, budget)[0]}\n\n[Truncated: showing ${budget} of ${document.tokenCount} tokens; use doc_parser for the rest. 内容已截断，请使用 doc_parser 查看其余部分。]`;
      }
      return {
        content: [{ type: 'text', text }],
        metadata: {
          document: {
            title: document.title,
            format: document.format,
            source: document.source,
            pages: document.pages.length,
            tokenCount: document.tokenCount,
          },
        },
      };
    },
  });
}

/** `doc_parser` with default options (any readable path, URLs allowed). */
export const docParserTool = createDocParserTool();

/** `simple_doc_parser` with default options (any readable path, URLs allowed). */
export const simpleDocParserTool = createSimpleDocParserTool();

function resolveFile(
  toolName: string,
  file: string,
  context: ToolContext,
  options: DocParserToolOptions,
): string {
  const trimmed = file.trim();
  if (/^https?:\/\//i.test(trimmed)) {
    if (options.allowUrls === false) {
      throw new ToolArgumentError(toolName, [
        { path: ['file'], message: 'URLs are not allowed here; give a local file path.' },
      ]);
    }
    return trimmed;
  }
  // A bare name the user attached ("report.pdf") refers to that attachment.
  const attached = context.files.find(
    (candidate) => candidate === trimmed || candidate.split(/[\\/]/).pop() === trimmed,
  );
  if (attached && /^https?:\/\//i.test(attached)) return attached;
  const base = options.allowedDirectories?.[0] ?? context.workDir ?? process.cwd();
  const path = resolve(base, attached ?? trimmed);
  const roots = options.allowedDirectories;
  if (roots && !roots.some((root) => isInside(resolve(root), path))) {
    throw new ToolArgumentError(toolName, [
      {
        path: ['file'],
        message: `"${trimmed}" is outside the directories this tool may read (${roots.join(', ')}).`,
      },
    ]);
  }
  return path;
}

function isInside(root: string, path: string): boolean {
  const difference = relative(root, path);
  return difference === '' || (!difference.startsWith('..') && !isAbsolute(difference));
}
