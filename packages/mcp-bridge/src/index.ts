export type {
  MCPServerConfig,
  MCPServersConfig,
  RemoteServerConfig,
  StdioServerConfig,
} from './config.js';
export { loadMCPServersConfig, parseMCPServersConfig } from './config.js';
export type { MCPResourceReference } from './content-mapping.js';
export { fromMCPResult, toMCPContent } from './content-mapping.js';
export { MCPConnectionError, MCPErrorCodes, MCPServerDisconnectedError } from './errors.js';
export { InMemoryEventStore } from './event-store.js';
export type { MCPHttpServer, MCPHttpServerOptions } from './http-server.js';
export { serveMCPHttp } from './http-server.js';
export type { MCPConnectReport, MCPManagerOptions, MCPServerStatus } from './mcp-manager.js';
export { MCPManager, defaultToolName } from './mcp-manager.js';
export type { MCPServerOptions, MCPStdioServer } from './mcp-server.js';
export { createMCPServer, serveMCPStdio } from './mcp-server.js';
export type {
  MCPConnectionState,
  MCPRoot,
  MCPTransportKind,
  ReconnectOptions,
} from './server-connection.js';
