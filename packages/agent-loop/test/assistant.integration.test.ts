import { join } from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import type { ChatMessage, Retriever } from '@quiver/core';
import { countTokens } from 'gpt-tokenizer';
import type { AgentEvent } from '../src/agent-events.js';
import { Assistant } from '../src/assistant.js';
import { OpenAIChatModel } from '../src/openai-chat-model.js';
import type { OpenAITestServer } from '../src/testing.js';
import { startOpenAITestServer } from '../src/testing.js';
import { KeywordRetriever, recordingLogger } from './helpers.js';

const fixtures = join(__dirname, 'fixtures');
const cranfield = join(fixtures, 'cranfield-abstracts.md');
const readability = join(fixtures, 'readability-README.md');

let server: OpenAITestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function assistantWith(
  retriever: Retriever,
  options: { maxRefTokens?: number; logger?: ReturnType<typeof recordingLogger> } = {},
) {
  server = await startOpenAITestServer({
    script: [
      { text: 'According to [1], complete similarity requires identical aircraft and model.' },
    ],
  });
  const model = new OpenAIChatModel({
    baseURL: server.baseURL,
    apiKey: 'k',
    model: 'test-model',
    retry: { maxRetries: 0 },
  });
  return new Assistant({ model, retriever, ...options });
}

function systemSent(): string {
  return (server!.requests[0]!.body.messages as ChatMessage[])[0]!.content as string;
}

const question =
  'what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft';

describe('Assistant (RAG) with real documents through a Retriever', () => {
  it('retrieves from attached files and cites the sources in the system message', async () => {
    const retriever = new KeywordRetriever();
    const assistant = await assistantWith(retriever);
    const events: AgentEvent[] = [];
    const result = await assistant
      .run(
        [
          {
            role: 'user',
            content: [
              { type: 'text', text: question },
              { type: 'file', file: { path: cranfield } },
              { type: 'file', file: { path: readability } },
            ],
          },
        ],
        { onEvent: (event) => events.push(event) },
      )
      .final();
    expect(result.status).toBe('completed');
    expect(retriever.calls[0]).toMatchObject({
      query: question,
      files: [cranfield, readability],
      maxTokens: 4000,
    });
    const system = systemSent();
    expect(system.startsWith('You are a helpful assistant.')).toBe(true);
    expect(system).toContain('# Knowledge Base');
    expect(system).toContain('Cite the excerpts you use by their numbers, like [1].');
    // The best passage is the thermo-aeroelastic similarity abstract (Cranfield 184, judged relevant).
    expect(system).toMatch(/## \[1\] From .*cranfield-abstracts\.md — Cranfield document 184/);
    expect(system).toContain(
      'complete similarity obtains only when aircraft and model are identical in all respects',
    );
    expect(system).not.toContain('npm install @mozilla/readability');
    const retrieval = events.find((event) => event.type === 'retrieval') as Extract<
      AgentEvent,
      { type: 'retrieval' }
    >;
    expect(retrieval.chunks[0]!.chunkId).toBe(`${cranfield}#0`);
    // The file parts reach the model as lines naming the files.
    const user = (server!.requests[0]!.body.messages as ChatMessage[])[1]!;
    expect(JSON.stringify(user.content)).toContain(`[file: ${cranfield}]`);
  });

  it('keeps the knowledge within maxRefTokens', async () => {
    const assistant = await assistantWith(new KeywordRetriever(), { maxRefTokens: 120 });
    await assistant
      .run([
        {
          role: 'user',
          content: [
            { type: 'text', text: question },
            { type: 'file', file: { path: cranfield } },
          ],
        },
      ])
      .final();
    const knowledge = systemSent().split('# Knowledge Base')[1]!;
    const passages = knowledge
      .split(/\n## \[\d+\] From [^\n]*\n/)
      .slice(1)
      .join('\n');
    expect(countTokens(passages.replace(/```/g, ''))).toBeLessThanOrEqual(130);
    expect(knowledge).toContain('…');
  });

  it('uses the Chinese template for a Chinese question', async () => {
    const assistant = await assistantWith(new KeywordRetriever());
    await assistant
      .run([
        {
          role: 'user',
          content: [
            { type: 'text', text: `请总结：${question}` },
            { type: 'file', file: { path: cranfield } },
          ],
        },
      ])
      .final();
    const system = systemSent();
    expect(system).toContain('# 知识库');
    expect(system).toMatch(
      /## \[1\] 来自 .*cranfield-abstracts\.md — Cranfield document 184: .* 的内容：/,
    );
  });

  it('falls back to plain chat with a logged warning when retrieval fails', async () => {
    const logger = recordingLogger();
    const broken: Retriever = {
      retrieve: async () => {
        throw new Error('index is corrupt');
      },
    };
    const assistant = await assistantWith(broken, { logger });
    const result = await assistant
      .run([
        {
          role: 'user',
          content: [
            { type: 'text', text: question },
            { type: 'file', file: { path: cranfield } },
          ],
        },
      ])
      .final();
    expect(result.status).toBe('completed');
    expect(systemSent()).toBe('You are a helpful assistant.');
    expect(logger.records).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: expect.stringContaining('retrieval failed'),
        fields: expect.objectContaining({ error: 'index is corrupt' }),
      }),
    );
  });

  it('logs retriever warnings and does not retrieve without files', async () => {
    const logger = recordingLogger();
    const retriever = new KeywordRetriever();
    const assistant = await assistantWith(retriever, { logger });
    await assistant
      .run([
        {
          role: 'user',
          content: [
            { type: 'text', text: question },
            { type: 'file', file: { path: join(fixtures, 'missing.md') } },
          ],
        },
      ])
      .final();
    expect(
      logger.records.some(
        (record) => record.level === 'warn' && record.message.includes('could not read'),
      ),
    ).toBe(true);
    server!.push({ text: 'plain' });
    await assistant.run([{ role: 'user', content: question }]).final();
    expect(retriever.calls).toHaveLength(1);
  });
});
