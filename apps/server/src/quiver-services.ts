import { join } from 'node:path';
import type { AgentChatServiceOptions } from './agent-chat-service.js';
import type { OpenAIChatModelOptions } from '@quiver/agent-loop';
import { OpenAIChatModel } from '@quiver/agent-loop';
import type { ChatModel, Retriever } from '@quiver/core';
import type { Toolkit } from '@quiver/core-registry';
import { DocumentRetriever, KnowledgeBase } from '@quiver/rag-retrieval';
import { createWebExtractor } from '@quiver/search-tools';
import { AgentChatService } from './agent-chat-service.js';
import { KnowledgeBases } from './knowledge-bases.js';
import { createMcpEndpoint } from './mcp-endpoint.js';
import { createPageBackend, pageSource } from './page-backend.js';
import { PageCache } from './page-cache.js';
import type { ServerServices } from './services.js';
import { documentParsing } from './document-parsing.js';

/** Options of {@link createQuiverServices}. */
export interface QuiverServicesOptions {
  /** The tools served over REST, MCP and to the Assistant. Closed on shutdown. */
  toolkit: Toolkit;
  /**
   * The chat model: a `ChatModel`, or `OpenAIChatModel` options (endpoint, key, model name).
   * Omit (with `unavailableReason`) to run without chat.
   */
  model?: ChatModel | OpenAIChatModelOptions;
  /** Why there is no model, naming the env vars to set (shown in the web UI). */
  unavailableReason?: string;
  /** Agent settings (system message, limits…). */
  agent?: AgentChatServiceOptions['agent'];
  /** Where knowledge bases and the page history live. Omit to keep everything in memory. */
  dataDir?: string;
  /** Knowledge bases with their own directories, by name. */
  knowledgeBasePaths?: Record<string, string>;
  /** Hosts the page fetcher may reach although private (tests on 127.0.0.1). Default none. */
  allowHosts?: string[];
  /** Extra clean-up on shutdown (kernels, MCP child processes of the toolkit's tools…). */
  onShutdown?: () => Promise<void>;
}

const NO_MODEL =
  'No chat model is configured: set OPENAI_API_KEY (plus OPENAI_BASE_URL and QUIVER_MODEL for other OpenAI-compatible endpoints) and restart the server.';

function isChatModel(model: ChatModel | OpenAIChatModelOptions): model is ChatModel {
  return typeof (model as ChatModel).stream === 'function';
}

/**
 * Wire the packages into the server's services: chat on an agent-loop `Assistant` (retrieval over
 * uploaded files and the selected browsing-history pages), named knowledge bases, the MCP endpoint over the toolkit, and the browsing
 * history whose pages are fetched with the web extractor and indexed in the `pages` knowledge
 * base. Shutdown closes the MCP sessions, the knowledge bases, the fetcher and the extra hook.
 */
export async function createQuiverServices(
  options: QuiverServicesOptions,
): Promise<ServerServices> {
  const { toolkit } = options;
  const knowledgeBases = new KnowledgeBases({
    ...(options.dataDir !== undefined ? { directory: join(options.dataDir, 'kb') } : {}),
    ...(options.knowledgeBasePaths ? { paths: options.knowledgeBasePaths } : {}),
  });
  // Uploaded files are indexed on demand in memory: they belong to one conversation.
  const uploads = new DocumentRetriever({
    knowledgeBase: await KnowledgeBase.open(),
    ...documentParsing(),
  });
  const model = options.model
    ? isChatModel(options.model)
      ? options.model
      : new OpenAIChatModel(options.model)
    : undefined;
  const extractor = createWebExtractor(options.allowHosts ? { allow: options.allowHosts } : {});
  const pageBackend = createPageBackend({
    extractor,
    knowledgeBase: async () => (await knowledgeBases.get('pages')).knowledgeBase,
  });
  const pages =
    options.dataDir !== undefined
      ? await PageCache.open(join(options.dataDir, 'pages.json'), pageBackend, {
          logger: toolkit.logger,
        })
      : undefined;
  // The Assistant's knowledge: the files of the request, plus the browsing-history pages the
  // user selected (searched in the `pages` knowledge base, cited by their URL).
  const retriever: Retriever = {
    async retrieve(request) {
      const selected = pages?.selected() ?? [];
      const [fromFiles, fromPages] = await Promise.all([
        request.files && request.files.length > 0 ? uploads.retrieve(request) : undefined,
        selected.length > 0
          ? (await knowledgeBases.get('pages')).knowledgeBase.search({
              query: request.query,
              topK: request.topK ?? 5,
              sources: selected.map(pageSource),
              ...(request.maxTokens !== undefined ? { maxRefTokens: request.maxTokens } : {}),
              ...(request.signal ? { signal: request.signal } : {}),
            })
          : undefined,
      ]);
      const urls = new Map(selected.map((page) => [pageSource(page), page.url]));
      return {
        chunks: [
          ...(fromFiles?.chunks ?? []),
          ...(fromPages?.hits ?? []).map((hit) => ({
            chunkId: hit.chunk.id,
            text: hit.chunk.text,
            source: urls.get(hit.chunk.source) ?? hit.chunk.source,
            page: hit.chunk.page,
            headingPath: hit.chunk.headingPath,
            score: hit.score,
          })),
        ],
        warnings: [...(fromFiles?.warnings ?? []), ...(fromPages?.warnings ?? [])],
      };
    },
  };
  const chat = new AgentChatService({
    toolkit,
    retriever,
    alwaysRetrieve: () => (pages?.selected().length ?? 0) > 0,
    ...(model ? { model } : { unavailableReason: options.unavailableReason ?? NO_MODEL }),
    ...(options.agent ? { agent: options.agent } : {}),
  });
  const mcp = createMcpEndpoint({ toolkit });
  return {
    toolkit,
    chat,
    knowledgeBases,
    mcp,
    ...(pages ? { pages } : {}),
    onShutdown: async () => {
      await knowledgeBases.close();
      await extractor.close();
      await options.onShutdown?.();
    },
  };
}
