export type { AppOptions } from './app.js';
export { createApp } from './app.js';
export type { RunningServer, ServerOptions } from './server.js';
export { defaultWebDir, startServer } from './server.js';
export type {
  ChatEvent,
  ChatService,
  KnowledgeBaseService,
  McpEndpoint,
  ServerServices,
} from './services.js';
export type { CachedPage, PageBackend, PageStatus } from './page-cache.js';
export { PageCache } from './page-cache.js';
