import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import type { ChatMessage } from '@quiver/core';
import { DocumentRetriever } from '@quiver/rag-retrieval';
import { Assistant } from '../src/assistant.js';
import { OpenAIChatModel } from '../src/openai-chat-model.js';
import type { OpenAITestServer } from '../src/testing.js';
import { startOpenAITestServer } from '../src/testing.js';

// The Assistant with the real retrieval package: doc-parser parses the attached files,
// rag-retrieval chunks and indexes them (hybrid BM25 + offline embedder), and the Assistant
// puts what it finds, with sources, into the system message the model receives.
const fixtures = join(__dirname, 'fixtures');
const cranfield = join(fixtures, 'cranfield-abstracts.md');
const readability = join(fixtures, 'readability-README.md');

let server: OpenAITestServer | undefined;
afterAll(async () => {
  await server?.close();
});

describe('Assistant over @quiver/rag-retrieval', () => {
  it('answers from attached files with the retrieved passages and their sources', async () => {
    server = await startOpenAITestServer({
      script: [{ text: 'Per [1], the model must match the aircraft in all respects.' }],
    });
    const model = new OpenAIChatModel({
      baseURL: server.baseURL,
      apiKey: 'k',
      model: 'test-model',
      retry: { maxRetries: 0 },
    });
    const retriever = new DocumentRetriever();
    const assistant = new Assistant({ model, retriever, maxRefTokens: 1500 });
    const question =
      'what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft';
    const result = await assistant
      .run([
        {
          role: 'user',
          content: [
            { type: 'text', text: question },
            { type: 'file', file: { path: cranfield } },
            { type: 'file', file: { path: readability } },
          ],
        },
      ])
      .final();
    expect(result.status).toBe('completed');
    const system = (server.requests[0]!.body.messages as ChatMessage[])[0]!.content as string;
    expect(system).toContain('# Knowledge Base');
    // The first cited passage is one of the abstracts the Cranfield assessors judged relevant to
    // this question (query 1: documents 184, 29, 31, 12 and 51 of those in the fixture); the
    // fixture also holds seven that are not (500–1300).
    const first = system.slice(
      system.indexOf('[1]'),
      system.indexOf('[2]') > 0 ? system.indexOf('[2]') : undefined,
    );
    expect(first).toContain('cranfield-abstracts.md');
    const cited = Number(/Cranfield document (\d+)/.exec(first)?.[1]);
    expect([184, 29, 31, 12, 51]).toContain(cited);
    // The unrelated README is not what the Assistant leads with.
    expect(first).not.toContain('readability-README.md');
  });

  it('falls back to plain chat when a file cannot be parsed', async () => {
    server?.close();
    server = await startOpenAITestServer({
      script: [{ text: 'I could not read that file, but here is what I know.' }],
    });
    const model = new OpenAIChatModel({
      baseURL: server.baseURL,
      apiKey: 'k',
      model: 'test-model',
      retry: { maxRetries: 0 },
    });
    const assistant = new Assistant({ model, retriever: new DocumentRetriever() });
    const result = await assistant
      .run([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'summarise' },
            { type: 'file', file: { path: join(fixtures, 'missing.pdf') } },
          ],
        },
      ])
      .final();
    expect(result.status).toBe('completed');
  });
});
