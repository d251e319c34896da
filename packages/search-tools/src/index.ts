export {
  charsetFromContentType,
  charsetFromMarkup,
  decodeBody,
  normalizeCharset,
} from './charset.js';
export type { CharsetSource, DecodedText } from './charset.js';
export {
  BlockedUrlError,
  ImageGenerationError,
  ProviderError,
  SearchToolsErrorCodes,
  WebFetchError,
} from './errors.js';
export type { BlockReason } from './errors.js';
export { createGuardedDispatcher } from './guarded-dispatcher.js';
export type { GuardedDispatcherOptions, LookupFunction } from './guarded-dispatcher.js';
export { extractHtmlContent } from './html-content.js';
export type { ExtractedLink, HtmlContent, HtmlContentOptions } from './html-content.js';
export {
  createHttpClient,
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_REDIRECTS,
  DEFAULT_TIMEOUT_MS,
} from './http-client.js';
export type {
  HttpClient,
  HttpClientOptions,
  HttpRequestOptions,
  HttpResponse,
  ResponseHead,
} from './http-client.js';
export { sniffImage } from './image-bytes.js';
export type { ImageSniff } from './image-bytes.js';
export { createImageGenTool, imageGenToolFactory } from './image-gen-tool.js';
export type { ImageGenArguments, ImageGenToolOptions } from './image-gen-tool.js';
export {
  createImageGenerator,
  DEFAULT_IMAGE_BASE_URL,
  DEFAULT_OPENAI_IMAGE_MODEL,
  IMAGE_GEN_ENV,
  IMAGE_SIDE_LIMITS,
  MAX_IMAGES_PER_CALL,
  parseImageSize,
} from './image-generation.js';
export type {
  GeneratedImage,
  GenerateImageOptions,
  ImageFailure,
  ImageGenerationRequest,
  ImageGenerationResult,
  ImageGenerator,
  ImageGeneratorOptions,
  ImageResponseFormat,
} from './image-generation.js';
export { classifyAddress, isIpLiteral } from './ip-address.js';
export type { AddressRange } from './ip-address.js';
export { createNetworkPolicy } from './network-policy.js';
export type { AddressVerdict, NetworkPolicy, NetworkPolicyOptions } from './network-policy.js';
export { isTransientStatus, parseRetryAfter } from './retry-after.js';
export { canonicalUrlKey } from './canonical-url.js';
export { createImageSearchTool, imageSearchToolFactory } from './image-search-tool.js';
export type { ImageSearchArguments } from './image-search-tool.js';
export { PROVIDER_ENV, PROVIDERS_ENV_VARIABLE, resolveSearchProviders } from './provider-config.js';
export type { ProviderConfig, ProviderName, ProviderSpec } from './provider-config.js';
export { createBingProvider } from './providers/bing.js';
export type { BingProviderOptions } from './providers/bing.js';
export { createBraveProvider } from './providers/brave.js';
export type { BraveProviderOptions } from './providers/brave.js';
export { createSearxngProvider } from './providers/searxng.js';
export type { SearxngProviderOptions } from './providers/searxng.js';
export { createSerperProvider } from './providers/serper.js';
export type { SerperProviderOptions } from './providers/serper.js';
export { createTavilyProvider } from './providers/tavily.js';
export type { TavilyProviderOptions } from './providers/tavily.js';
export type {
  Freshness,
  ImageResult,
  ProviderCallContext,
  SearchProvider,
  SearchRequest,
  SearchResult,
} from './search-types.js';
export { TtlCache } from './ttl-cache.js';
export type { TtlCacheOptions } from './ttl-cache.js';
export { createWebExtractor } from './web-extractor.js';
export type {
  ExtractedPage,
  ExtractOptions,
  WebExtractor,
  WebExtractorOptions,
} from './web-extractor.js';
export { createWebExtractorTool, webExtractorToolFactory } from './web-extractor-tool.js';
export type { WebExtractorArguments, WebExtractorToolOptions } from './web-extractor-tool.js';
export { createWebSearch } from './web-search.js';
export type {
  ProviderFailure,
  SearchOptions,
  SearchResponse,
  WebSearch,
  WebSearchOptions,
} from './web-search.js';
export { createWebSearchTool, webSearchToolFactory } from './web-search-tool.js';
export type { WebSearchArguments, WebSearchToolOptions } from './web-search-tool.js';
