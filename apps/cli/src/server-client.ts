import type { ToolResponse } from '@quiver/core';
import { QuiverError, errorMessage } from '@quiver/core';
import type { QuiverConfig } from './config.js';

/** A running `quiver serve` could not be reached or answered with an error. */
export class ServerRequestError extends QuiverError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('cli_server_request_failed', message, options);
  }
}

/** The server to talk to: `--server`, else `$QUIVER_SERVER_URL`, else the configured host and port. */
export function serverUrl(
  explicit: string | undefined,
  config: Pick<QuiverConfig, 'server'>,
  env: NodeJS.ProcessEnv,
): string {
  const url =
    explicit ??
    env.QUIVER_SERVER_URL ??
    `http://${config.server.host ?? '127.0.0.1'}:${config.server.port ?? 7860}`;
  return url.replace(/\/+$/, '');
}

/**
 * Call a tool on a running server (`POST /v1/tools/:name/call`, streamed), passing each chunk to
 * `onChunk`. Returns the merged response.
 * @throws ServerRequestError when the server is unreachable or refuses the request
 */
export async function postToolCall(
  url: string,
  name: string,
  args: Record<string, unknown>,
  options: {
    sessionId?: string;
    token?: string | undefined;
    onChunk?: ((chunk: ToolResponse) => void | Promise<void>) | undefined;
    signal?: AbortSignal;
  } = {},
): Promise<ToolResponse> {
  let response: Response;
  try {
    response = await fetch(`${url}/v1/tools/${encodeURIComponent(name)}/call`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      },
      body: JSON.stringify({
        arguments: args,
        stream: true,
        ...(options.sessionId ? { sessionId: options.sessionId } : {}),
      }),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (error) {
    throw new ServerRequestError(
      `No Quiver server answers at ${url} (${errorMessage(error)}): start one with \`quiver serve\`, or pass --server / set QUIVER_SERVER_URL.`,
      { cause: error },
    );
  }
  if (!response.ok || !response.body) {
    const body = (await response.json().catch(() => ({}))) as { error?: { message?: string } };
    throw new ServerRequestError(
      `The server at ${url} answered ${response.status}: ${body.error?.message ?? response.statusText}`,
    );
  }
  let final: ToolResponse | undefined;
  for await (const event of readServerSentEvents(response.body)) {
    if (event.event === 'chunk') await options.onChunk?.(event.data as ToolResponse);
    else if (event.event === 'end') final = (event.data as { response: ToolResponse }).response;
  }
  if (!final) throw new ServerRequestError(`The server at ${url} ended the stream early.`);
  return final;
}

/** Parse a server-sent event stream into `{ event, data }` (data parsed as JSON). */
export async function* readServerSentEvents(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<{ event: string; data: unknown }> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(bytes, { stream: true });
    let boundary: number;
    while ((boundary = buffer.indexOf('\n\n')) >= 0) {
      const raw = buffer.slice(0, boundary);
      buffer = buffer.slice(boundary + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of raw.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      if (data.length) yield { event, data: JSON.parse(data.join('\n')) as unknown };
    }
  }
}
