import { QuiverDocumentParser, chunkDocument } from '@quiver/doc-parser';
import type { DocumentRetrieverOptions } from '@quiver/rag-retrieval';

/**
 * doc-parser's parser and chunker for a `DocumentRetriever`, passed explicitly: the retriever's
 * default loads doc-parser with a dynamic `import()`, which fails where modules are loaded as
 * CommonJS inside a VM (jest) and costs a lookup on the first file everywhere else.
 */
export function documentParsing(): Required<Pick<DocumentRetrieverOptions, 'parser' | 'chunker'>> {
  return { parser: new QuiverDocumentParser(), chunker: chunkDocument };
}
