import type { Language } from '@quiver/core';
import { ConfigurationError } from '@quiver/core';
import { Toolkit } from '@quiver/core-registry';
import { exampleTools } from '@quiver/core-registry/examples';
import type { CodeInterpreterOptions } from '@quiver/code-interpreter';
import {
  CodeInterpreter,
  createCodeInterpreterTool,
  createPythonExecutorTool,
} from '@quiver/code-interpreter';
import { createDocParserTool } from '@quiver/doc-parser';
import { DocumentRetriever, createRetrievalTool } from '@quiver/rag-retrieval';
import { createWebExtractorTool, createWebSearchTool } from '@quiver/search-tools';
import { documentParsing } from '@quiver/server';

/** Options of {@link createBuiltinToolkit}. */
export interface BuiltinToolkitOptions {
  language?: Language;
  /** Options of the toolkit's own code interpreter (kernels end when the toolkit closes). */
  interpreter?: CodeInterpreterOptions;
}

/**
 * The toolkit the CLI and `quiver serve` offer: the example tools (calculator, current_time,
 * countdown), `code_interpreter` and `python_executor` (IPython kernels), `doc_parser`,
 * `retrieval` over the conversation's files, `web_extractor`, and `web_search` when a search
 * provider is configured (SEARXNG_URL, BRAVE_API_KEY, TAVILY_API_KEY, SERPER_API_KEY or BING_API_KEY). Closing the
 * toolkit stops every kernel it started.
 */
export function createBuiltinToolkit(options: BuiltinToolkitOptions = {}): Toolkit {
  const toolkit = new Toolkit({ language: options.language ?? 'en' });
  for (const tool of exampleTools) toolkit.register(tool);
  const interpreter = new CodeInterpreter({ poolSize: 0, ...options.interpreter });
  toolkit.register(createCodeInterpreterTool({ interpreter }));
  toolkit.register(createPythonExecutorTool({ interpreter }));
  toolkit.register(createDocParserTool());
  // Files named in conversations are indexed in memory, once per content hash.
  toolkit.register(createRetrievalTool({ retriever: new DocumentRetriever(documentParsing()) }));
  toolkit.register(createWebExtractorTool());
  try {
    toolkit.register(createWebSearchTool());
  } catch (error) {
    // No search provider configured (SEARXNG_URL, BRAVE_API_KEY…): the tool is left out.
    if (!(error instanceof ConfigurationError)) throw error;
  }
  toolkit.onClose(async () => {
    await interpreter.close();
  });
  return toolkit;
}
