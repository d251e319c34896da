export type { OpenAITestServer, OpenAITestServerOptions } from './openai-test-server.js';
export { startOpenAITestServer } from './openai-test-server.js';
export type { ScriptedChatModelOptions } from './scripted-chat-model.js';
export { ScriptedChatModel } from './scripted-chat-model.js';
export type {
  RecordedRequest,
  Script,
  ScriptedCompletion,
  ScriptedDrop,
  ScriptedError,
  ScriptedHang,
  ScriptedReply,
  ScriptedToolCall,
} from './scripted-reply.js';
