import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ConfigurationError } from '@quiver/core';
import { EmbeddingError, HashedNgramEmbedder, OpenAIEmbedder } from '../src/index.js';
import { startEmbeddingServer, type EmbeddingServer } from '../src/testing.js';

// A real HTTP server on 127.0.0.1 speaking the OpenAI embeddings protocol, driven through the real openai SDK.
let server: EmbeddingServer;
beforeAll(async () => {
  server = await startEmbeddingServer({ dimensions: 48 });
});
afterAll(async () => {
  await server.close();
});

const embedder = (options: Partial<ConstructorParameters<typeof OpenAIEmbedder>[0]> = {}) =>
  new OpenAIEmbedder({
    model: 'test-embedding',
    baseURL: server.baseURL,
    apiKey: 'test-key',
    ...options,
  });

describe('OpenAIEmbedder against a local OpenAI-compatible server', () => {
  it('batches, keeps input order although the server reorders, and learns the dimensions', async () => {
    const client = embedder({ batchSize: 3 });
    expect(client.dimensions).toBeUndefined();
    const before = server.requests.length;
    const texts = ['alpha wing', 'beta tail', 'gamma fin', 'delta flap', ''];
    const vectors = await client.embed(texts);
    expect(server.requests.length - before).toBe(2);
    expect(server.requests.slice(before).map((request) => request.input.length)).toEqual([3, 2]);
    expect(server.requests.at(-1)!.input.at(-1)).toBe(' ');
    expect(client.dimensions).toBe(48);
    const reference = new HashedNgramEmbedder({ dimensions: 48 });
    expect(vectors[0]).toEqual(reference.embedOne('alpha wing'));
    expect(vectors[3]).toEqual(reference.embedOne('delta flap'));
  });

  it('passes requested dimensions to the model and includes them in its id', async () => {
    const client = embedder({ dimensions: 24 });
    const [vector] = await client.embed(['x-ray']);
    expect(vector).toHaveLength(24);
    expect(server.requests.at(-1)!.dimensions).toBe(24);
    expect(client.id).toBe('openai:test-embedding:24');
  });

  it('retries 5xx and 429 answers and then succeeds', async () => {
    const before = server.requests.length;
    server.failNext([500, 429]);
    const vectors = await embedder({ maxRetries: 3 }).embed(['retry me']);
    expect(vectors).toHaveLength(1);
    expect(server.requests.length - before).toBe(3);
  });

  it('gives a retryable EmbeddingError when retries run out', async () => {
    server.failNext([503, 503]);
    const error = await embedder({ maxRetries: 1 })
      .embed(['x'])
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(EmbeddingError);
    expect((error as EmbeddingError).statusCode).toBe(503);
    expect((error as EmbeddingError).isRetryable).toBe(true);
  });

  it('does not retry a 404 for an unknown model and says what to check', async () => {
    const before = server.requests.length;
    const error = await embedder({ model: 'no-such-model' })
      .embed(['x'])
      .catch((caught: unknown) => caught);
    expect(server.requests.length - before).toBe(1);
    expect(error).toBeInstanceOf(EmbeddingError);
    expect((error as EmbeddingError).isRetryable).toBe(false);
    expect((error as Error).message).toMatch(/no-such-model/);
  });

  it('reports an unreachable service as a retryable error', async () => {
    server.goDown();
    try {
      const error = await embedder({ maxRetries: 0 })
        .embed(['x'])
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(EmbeddingError);
      expect((error as EmbeddingError).isRetryable).toBe(true);
      expect((error as Error).message).toMatch(/Could not reach/);
    } finally {
      server.recover();
    }
  });

  it('honours an aborted signal', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(embedder().embed(['x'], { signal: controller.signal })).rejects.toThrow();
  });

  it('needs an API key for OpenAI itself and names the variable to set', () => {
    const saved = { key: process.env['OPENAI_API_KEY'], url: process.env['OPENAI_BASE_URL'] };
    delete process.env['OPENAI_API_KEY'];
    delete process.env['OPENAI_BASE_URL'];
    try {
      expect(() => new OpenAIEmbedder({ model: 'text-embedding-3-small' })).toThrow(
        ConfigurationError,
      );
      expect(() => new OpenAIEmbedder({ model: 'text-embedding-3-small' })).toThrow(
        /OPENAI_API_KEY/,
      );
      expect(() => new OpenAIEmbedder({ model: 'm', baseURL: server.baseURL })).not.toThrow();
    } finally {
      if (saved.key !== undefined) process.env['OPENAI_API_KEY'] = saved.key;
      if (saved.url !== undefined) process.env['OPENAI_BASE_URL'] = saved.url;
    }
  });
});
