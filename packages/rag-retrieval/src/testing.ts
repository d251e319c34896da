import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HashedNgramEmbedder } from './hashed-ngram-embedder.js';

/** Options of {@link startEmbeddingServer}. */
export interface EmbeddingServerOptions {
  /** Vector length served. Default 64. */
  dimensions?: number;
  /** Model name the server answers to; other names get a 404 like OpenAI's. Default `test-embedding`. */
  model?: string;
  /** Answer `data` in reverse order (real servers may reorder; clients must sort by `index`). Default true. */
  shuffle?: boolean;
}

/** A running {@link startEmbeddingServer}. */
export interface EmbeddingServer {
  /** Base URL for the OpenAI SDK (`…/v1`). */
  readonly baseURL: string;
  /** Request bodies received, in order. */
  readonly requests: { model: string; input: string[]; dimensions?: number }[];
  /** Answer the next requests with these HTTP statuses (e.g. `[500, 429]`) before serving normally again. */
  failNext(statuses: number[]): void;
  /** Reset every connection from now on (a crashed service) until `recover()`. */
  goDown(): void;
  recover(): void;
  close(): Promise<void>;
}

/**
 * An OpenAI-compatible `/v1/embeddings` endpoint on 127.0.0.1 (random port) that embeds with the
 * offline {@link HashedNgramEmbedder}: deterministic, no network, no key. For tests of embedding
 * clients and of retrieval with a "remote" embedder (failures, outages, batching).
 *
 * @example
 * ```ts
 * const server = await startEmbeddingServer();
 * const embedder = new OpenAIEmbedder({ model: 'test-embedding', baseURL: server.baseURL, apiKey: 'test' });
 * await server.close();
 * ```
 */
export async function startEmbeddingServer(
  options: EmbeddingServerOptions = {},
): Promise<EmbeddingServer> {
  const model = options.model ?? 'test-embedding';
  const defaultDimensions = options.dimensions ?? 64;
  const embedders = new Map<number, HashedNgramEmbedder>();
  const requests: EmbeddingServer['requests'] = [];
  const failures: number[] = [];
  let down = false;

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    if (down) {
      request.socket.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (request.method !== 'POST' || !request.url?.endsWith('/embeddings')) {
      send(404, {
        error: {
          message: `No route ${request.method} ${request.url}`,
          type: 'invalid_request_error',
        },
      });
      return;
    }
    let body: { model?: string; input?: string | string[]; dimensions?: number };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
    } catch {
      send(400, { error: { message: 'Invalid JSON body', type: 'invalid_request_error' } });
      return;
    }
    const input = typeof body.input === 'string' ? [body.input] : (body.input ?? []);
    requests.push({
      model: String(body.model),
      input,
      ...(body.dimensions ? { dimensions: body.dimensions } : {}),
    });
    const failure = failures.shift();
    if (failure !== undefined) {
      send(failure, { error: { message: `Injected failure ${failure}`, type: 'server_error' } });
      return;
    }
    if (body.model !== model) {
      send(404, {
        error: {
          message: `The model '${body.model}' does not exist`,
          type: 'invalid_request_error',
        },
      });
      return;
    }
    const dimensions = body.dimensions ?? defaultDimensions;
    let embedder = embedders.get(dimensions);
    if (!embedder) embedders.set(dimensions, (embedder = new HashedNgramEmbedder({ dimensions })));
    const data = input.map((text, index) => ({
      object: 'embedding',
      index,
      embedding: embedder.embedOne(text),
    }));
    if (options.shuffle ?? true) data.reverse();
    const tokens = input.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0);
    send(200, {
      object: 'list',
      data,
      model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  };

  const server: Server = createServer((request, response) => {
    handle(request, response).catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    failNext: (statuses) => failures.push(...statuses),
    goDown: () => {
      down = true;
    },
    recover: () => {
      down = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
