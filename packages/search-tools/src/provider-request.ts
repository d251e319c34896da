import { errorMessage } from '@quiver/core';
import type { z } from 'zod';
import { ProviderError, SearchToolsErrorCodes } from './errors.js';
import { isTransientStatus, parseRetryAfter } from './retry-after.js';
import type { ProviderCallContext } from './search-types.js';

/** Provider responses are small; anything over 2 MiB is not a search answer. */
const MAX_PROVIDER_BYTES = 2 * 1024 * 1024;

/** One HTTP call to a provider's JSON API. */
export interface ProviderRequest {
  /** Provider name, for errors. */
  provider: string;
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** JSON body (POST). */
  json?: unknown;
  /**
   * Names of the secrets sent with the request (query parameter or header values); they are
   * replaced by `***` in error messages.
   */
  secrets?: string[];
}

/**
 * Call a provider and parse its JSON answer against `schema`.
 *
 * - 429, 408 and 5xx become a retryable {@link ProviderError} with `retryAfterMs` from `Retry-After`;
 * - other non-2xx statuses (401, 403, 400 …) become a non-retryable one quoting the provider's message;
 * - a body that is not JSON, or not the documented shape, becomes a `search_provider_bad_response` error.
 *
 * @internal
 */
export async function requestProviderJson<T>(
  context: ProviderCallContext,
  request: ProviderRequest,
  schema: z.ZodType<T>,
): Promise<T> {
  const response = await context.http.fetch(request.url, {
    method: request.method ?? 'GET',
    headers: {
      accept: 'application/json',
      ...(request.json !== undefined ? { 'content-type': 'application/json' } : {}),
      ...request.headers,
    },
    ...(request.json !== undefined ? { body: JSON.stringify(request.json) } : {}),
    maxBytes: MAX_PROVIDER_BYTES,
    timeoutMs: context.timeoutMs,
    // Provider APIs answer directly; a redirect would mean a misconfigured base URL.
    maxRedirects: 2,
    toolName: context.toolName,
    ...(context.signal !== undefined ? { signal: context.signal } : {}),
  });
  const text = Buffer.from(response.body).toString('utf8');
  const redact = (value: string): string =>
    (request.secrets ?? []).reduce(
      (result, secret) => (secret === '' ? result : result.split(secret).join('***')),
      value,
    );

  if (response.status < 200 || response.status >= 300) {
    const transient = isTransientStatus(response.status);
    const retryAfterMs = parseRetryAfter(response.headers['retry-after'], context.now);
    const detail = redact(providerMessage(text)).slice(0, 300);
    const advice =
      response.status === 401 || response.status === 403
        ? ' Check the API key.'
        : transient
          ? ' This is temporary; retry later.'
          : '';
    throw new ProviderError(
      `${request.provider} search failed with HTTP ${response.status}${detail ? `: ${detail}` : ''}.${advice}`,
      {
        provider: request.provider,
        toolName: context.toolName,
        statusCode: response.status,
        isRetryable: transient,
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      },
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ProviderError(
      `${request.provider} returned a response that is not valid JSON (${response.truncated ? 'cut at the size limit' : `${text.length} characters, starting "${redact(text.slice(0, 80))}"`}): ${errorMessage(error)}.`,
      {
        provider: request.provider,
        toolName: context.toolName,
        code: SearchToolsErrorCodes.providerResponse,
        statusCode: response.status,
      },
      { cause: error },
    );
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ProviderError(
      `${request.provider} returned JSON that does not follow its documented format (${issue ? `${issue.path.join('.') || 'root'}: ${issue.message}` : 'unexpected shape'}).`,
      {
        provider: request.provider,
        toolName: context.toolName,
        code: SearchToolsErrorCodes.providerResponse,
        statusCode: response.status,
      },
    );
  }
  return parsed.data;
}

/** Pull a human-readable message out of the error bodies providers send. */
function providerMessage(text: string): string {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const candidates: unknown[] = [
      body.message,
      body.detail,
      (body.detail as Record<string, unknown> | undefined)?.error,
      (body.error as Record<string, unknown> | undefined)?.message,
      (body.error as Record<string, unknown> | undefined)?.detail,
      typeof body.error === 'string' ? body.error : undefined,
      (body.errors as Array<Record<string, unknown>> | undefined)?.[0]?.message,
      body.info,
      body.reason,
    ];
    const found = candidates.find((candidate) => typeof candidate === 'string' && candidate !== '');
    if (typeof found === 'string') return found;
    if (typeof body.detail === 'object' && body.detail !== null) return JSON.stringify(body.detail);
  } catch {
    // not JSON: fall through to the raw text
  }
  return text.replace(/\s+/g, ' ').trim();
}

/** Join a base URL and a path without doubling or losing slashes. @internal */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}
