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
export type { AgentChatServiceOptions } from './agent-chat-service.js';
export { AgentChatService } from './agent-chat-service.js';
export type { KnowledgeBasesOptions } from './knowledge-bases.js';
export { KnowledgeBases } from './knowledge-bases.js';
export type { McpEndpointOptions } from './mcp-endpoint.js';
export { createMcpEndpoint } from './mcp-endpoint.js';
export type { PageBackendOptions } from './page-backend.js';
export { createPageBackend, pageSource } from './page-backend.js';
export type { QuiverServicesOptions } from './quiver-services.js';
export { createQuiverServices } from './quiver-services.js';
export { documentParsing } from './document-parsing.js';
