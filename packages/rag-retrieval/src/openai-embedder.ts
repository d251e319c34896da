import { ConfigurationError, errorMessage, type Embedder } from '@quiver/core';
import OpenAI from 'openai';
import { EmbeddingError } from './errors.js';

/** Options of {@link OpenAIEmbedder}. */
export interface OpenAIEmbedderOptions {
  /** Embedding model name, e.g. `text-embedding-3-small`, `bge-m3`, `nomic-embed-text`. */
  model: string;
  /** Base URL of any OpenAI-compatible endpoint (OpenAI, Azure-style proxies, vLLM, Ollama, LM Studio…). Default: the SDK's (`OPENAI_BASE_URL` or OpenAI). */
  baseURL?: string;
  /** API key. Default `OPENAI_API_KEY`; endpoints on a custom `baseURL` may need none. */
  apiKey?: string;
  /** Ask the model for shorter vectors (models that support it, e.g. `text-embedding-3-*`). Otherwise learned from the first response. */
  dimensions?: number;
  /** Texts per request. Default 64. */
  batchSize?: number;
  /** Requests in flight at once. Default 2. */
  concurrency?: number;
  /** Retries of a failed request (429, 5xx, connection errors), with the SDK's exponential backoff. Default 3. */
  maxRetries?: number;
  /** Time limit of one request in milliseconds. Default 60,000. */
  timeoutMs?: number;
  /** A `fetch` implementation (proxies, tests). */
  fetch?: typeof fetch;
}

/**
 * Embeddings from any OpenAI-compatible `/embeddings` endpoint through the official `openai` SDK:
 * batched, a bounded number of requests in flight, retried with backoff, and the vector length
 * learned from the model's first answer (or fixed with `dimensions`).
 *
 * @example
 * ```ts
 * const embedder = new OpenAIEmbedder({ model: 'text-embedding-3-small' }); // reads OPENAI_API_KEY
 * const vectors = await embedder.embed(['What is HNSW?']);
 * ```
 * @throws ConfigurationError at construction when no API key is available for OpenAI's own endpoint.
 */
export class OpenAIEmbedder implements Embedder {
  readonly model: string;
  readonly #client: OpenAI;
  readonly #requestedDimensions: number | undefined;
  readonly #batchSize: number;
  readonly #concurrency: number;
  #dimensions: number | undefined;

  constructor(options: OpenAIEmbedderOptions) {
    if (!options.model)
      throw new ConfigurationError(
        'OpenAIEmbedder needs a `model` (e.g. "text-embedding-3-small").',
      );
    const baseURL = options.baseURL ?? process.env['OPENAI_BASE_URL'];
    const apiKey = options.apiKey ?? process.env['OPENAI_API_KEY'];
    if (!apiKey && !baseURL) {
      throw new ConfigurationError(
        'OpenAIEmbedder has no API key: set the OPENAI_API_KEY environment variable, pass `apiKey`, or pass `baseURL` of an endpoint that needs none.',
      );
    }
    this.model = options.model;
    this.#requestedDimensions = options.dimensions;
    this.#dimensions = options.dimensions;
    this.#batchSize = Math.max(1, options.batchSize ?? 64);
    this.#concurrency = Math.max(1, options.concurrency ?? 2);
    this.#client = new OpenAI({
      // Local endpoints (Ollama, vLLM) accept any key; the SDK insists on one.
      apiKey: apiKey || 'not-needed',
      ...(baseURL ? { baseURL } : {}),
      maxRetries: options.maxRetries ?? 3,
      timeout: options.timeoutMs ?? 60_000,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  }

  /** `openai:<model>[:<dimensions>]`: stored with a knowledge base to detect a changed model. */
  get id(): string {
    return `openai:${this.model}${this.#requestedDimensions ? `:${this.#requestedDimensions}` : ''}`;
  }

  /** Vector length: the requested one, or the one the model returned; `undefined` before the first call. */
  get dimensions(): number | undefined {
    return this.#dimensions;
  }

  /**
   * Embed `texts`, in order.
   * @throws EmbeddingError when the service fails after its retries (`isRetryable` for 429/5xx/connection errors),
   * or answers with vectors of inconsistent length.
   */
  async embed(texts: string[], options: { signal?: AbortSignal } = {}): Promise<number[][]> {
    const batches: string[][] = [];
    for (let i = 0; i < texts.length; i += this.#batchSize)
      batches.push(texts.slice(i, i + this.#batchSize));
    const results: number[][][] = new Array(batches.length);
    let next = 0;
    const worker = async () => {
      while (next < batches.length) {
        const index = next++;
        results[index] = await this.#request(batches[index]!, options.signal);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#concurrency, batches.length) }, worker));
    return results.flat();
  }

  async #request(batch: string[], signal: AbortSignal | undefined): Promise<number[][]> {
    let response: OpenAI.Embeddings.CreateEmbeddingResponse;
    try {
      response = await this.#client.embeddings.create(
        {
          model: this.model,
          // The API rejects empty strings; a space embeds as "nothing" without failing the batch.
          input: batch.map((text) => (text.length > 0 ? text : ' ')),
          encoding_format: 'float',
          ...(this.#requestedDimensions ? { dimensions: this.#requestedDimensions } : {}),
        },
        signal ? { signal } : {},
      );
    } catch (error) {
      throw toEmbeddingError(error, this.model);
    }
    const data = [...response.data].sort((a, b) => a.index - b.index);
    if (data.length !== batch.length) {
      throw new EmbeddingError(
        `The embedding endpoint returned ${data.length} vectors for ${batch.length} inputs (model "${this.model}").`,
      );
    }
    const vectors = data.map((item) => item.embedding as number[]);
    for (const vector of vectors) {
      this.#dimensions ??= vector.length;
      if (vector.length !== this.#dimensions) {
        throw new EmbeddingError(
          `Model "${this.model}" returned a vector of ${vector.length} numbers; earlier ones had ${this.#dimensions}. Check that the endpoint serves one model.`,
        );
      }
    }
    return vectors;
  }
}

function toEmbeddingError(error: unknown, model: string): Error {
  if (error instanceof OpenAI.APIUserAbortError) return error;
  if (error instanceof OpenAI.APIConnectionError) {
    return new EmbeddingError(
      `Could not reach the embedding endpoint for model "${model}": ${errorMessage(error)}. Check the base URL and that the service is running.`,
      { cause: error, isRetryable: true },
    );
  }
  if (error instanceof OpenAI.APIError) {
    const status = error.status;
    const retryable = status === undefined || status === 408 || status === 429 || status >= 500;
    const hint =
      status === 401 || status === 403
        ? ' Check the API key (OPENAI_API_KEY or `apiKey`).'
        : status === 404
          ? ` Check that the endpoint serves model "${model}".`
          : retryable
            ? ' The service is overloaded or failing; try again later.'
            : '';
    return new EmbeddingError(
      `The embedding endpoint answered ${status ?? 'an error'}: ${error.message}.${hint}`,
      {
        cause: error,
        ...(status !== undefined ? { statusCode: status } : {}),
        isRetryable: retryable,
      },
    );
  }
  return new EmbeddingError(`Embedding with model "${model}" failed: ${errorMessage(error)}`, {
    cause: error,
  });
}
