export type { Bm25Options } from './bm25-index.js';
export { CachedEmbedder, type CachedEmbedderOptions } from './cached-embedder.js';
export {
  EmbedderMismatchError,
  EmbeddingError,
  IndexCorruptedError,
  InvalidQueryError,
  KnowledgeBaseLockedError,
  RetrievalErrorCodes,
  UnsupportedVersionError,
} from './errors.js';
export { HashedNgramEmbedder, type HashedNgramEmbedderOptions } from './hashed-ngram-embedder.js';
export {
  isCorpusFitted,
  LsaEmbedder,
  type CorpusFittedEmbedder,
  type LsaEmbedderOptions,
} from './lsa-embedder.js';
export {
  KNOWLEDGE_BASE_FORMAT_VERSION,
  KnowledgeBase,
  type AddDocumentInput,
  type FusionOptions,
  type KnowledgeBaseDocument,
  type KnowledgeBaseOptions,
  type SearchHit,
  type SearchMode,
  type SearchOptions,
  type SearchResult,
} from './knowledge-base.js';
export { OpenAIEmbedder, type OpenAIEmbedderOptions } from './openai-embedder.js';
export {
  convexFusion,
  reciprocalRankFusion,
  type RankedList,
  type ScoredList,
} from './rank-fusion.js';
export { TextAnalyzer, type StopWords, type TextAnalyzerOptions } from './text-analyzer.js';
export { countTextTokens, truncateToTokens } from './token-counter.js';
export type { VectorIndexOptions } from './vector-index.js';
export {
  evaluateRun,
  formatTrecRun,
  parseQrels,
  readBeirCollection,
  type BeirCollection,
  type Run,
  type RunMetrics,
} from './ir-evaluation.js';
export {
  DocumentRetriever,
  type DocumentChunker,
  type DocumentRetrieverOptions,
  type IndexReport,
} from './document-retriever.js';
export { createRetrievalTool, type RetrievalToolOptions } from './retrieval-tool.js';
export {
  SEARCHED_TOOLS_GROUP,
  createSearchToolsTool,
  type SearchToolsOptions,
} from './search-tools-tool.js';
export {
  ToolSearchIndex,
  splitIdentifier,
  type SearchableTool,
  type ToolSearchHit,
  type ToolSearchIndexOptions,
} from './tool-search.js';
