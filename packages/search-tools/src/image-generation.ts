import { ConfigurationError, errorMessage, ToolArgumentError } from '@quiver/core';
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { ImageGenerationError, SearchToolsErrorCodes } from './errors.js';
import type { LookupFunction } from './guarded-dispatcher.js';
import { createHttpClient, type HttpClient, type HttpResponse } from './http-client.js';
import { sniffImage } from './image-bytes.js';
import { createNetworkPolicy, type NetworkPolicy } from './network-policy.js';
import { joinUrl } from './provider-request.js';
import { isTransientStatus, parseRetryAfter } from './retry-after.js';

/**
 * Environment variables read by {@link createImageGenerator}, first match wins.
 * `DASHSCOPE_API_KEY` is only read when the base URL is a DashScope (`*.aliyuncs.com`) one.
 */
export const IMAGE_GEN_ENV = {
  baseUrl: ['QUIVER_IMAGE_BASE_URL', 'OPENAI_BASE_URL'],
  apiKey: ['QUIVER_IMAGE_API_KEY', 'OPENAI_API_KEY'],
  model: 'QUIVER_IMAGE_MODEL',
} as const;

/** Endpoint used when neither `baseUrl` nor the environment names one. */
export const DEFAULT_IMAGE_BASE_URL = 'https://api.openai.com/v1';
/** Model used against OpenAI when none is configured. */
export const DEFAULT_OPENAI_IMAGE_MODEL = 'gpt-image-1';
/** Most images one call may ask for. */
export const MAX_IMAGES_PER_CALL = 4;
/** Smallest and largest side accepted in a `size` (pixels). */
export const IMAGE_SIDE_LIMITS = { min: 256, max: 4096 } as const;

/** How the API is asked to return images. `omit` sends no `response_format` (GPT image models reject it and always answer base64). */
export type ImageResponseFormat = 'url' | 'b64_json' | 'omit';

/** Options of {@link createImageGenerator}. */
export interface ImageGeneratorOptions {
  /** API base, e.g. `https://api.openai.com/v1` or `https://dashscope.aliyuncs.com/compatible-mode/v1`. Default: env, then OpenAI. */
  baseUrl?: string;
  /** Bearer key. Default: `QUIVER_IMAGE_API_KEY`, `OPENAI_API_KEY` (and `DASHSCOPE_API_KEY` for DashScope URLs). */
  apiKey?: string;
  /** Model name. Default: `QUIVER_IMAGE_MODEL`; `gpt-image-1` against OpenAI; otherwise required. */
  model?: string;
  /** Environment to read the variables from (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** `response_format` to send. Default `omit` for `gpt-image-*` models, else `b64_json`. */
  responseFormat?: ImageResponseFormat;
  /** Sizes the model supports (e.g. `['1024x1024', '1792x1024', '1024x1792']`); any other is refused before the call. */
  sizes?: readonly string[];
  /** Size sent when the caller gives none (default: none sent, the API's default applies). */
  defaultSize?: string;
  /** How the size is written on the wire: `x` (OpenAI, `1024x1024`) or `*` (DashScope, `1024*1024`). Default `x`. */
  sizeSeparator?: 'x' | '*';
  /** Most images one call may ask for, 1..4 (default 4; DALL·E 3 and some Qwen models take only 1). */
  maxImages?: number;
  /** Extra body fields sent with every request, e.g. `{ quality: 'high' }` or `{ watermark: false }`. */
  extraBody?: Record<string, unknown>;
  /** Directory images are saved to when a call names none. */
  outputDir?: string;
  /** Largest image accepted, in bytes (default 25 MiB). */
  maxImageBytes?: number;
  /** Time limit of the generation request in milliseconds (default 150 000: generation is slow). */
  timeoutMs?: number;
  /** Network policy for downloads (the API's host is added to it). Default: public internet only. */
  policy?: NetworkPolicy;
  /** HTTP client to use (you then own its lifecycle; its policy is the one enforced). */
  httpClient?: HttpClient;
  lookup?: LookupFunction;
  /** Tool name put on errors (default `image_gen`). */
  toolName?: string;
}

/** What to generate. */
export interface ImageGenerationRequest {
  /** Description of the image. */
  prompt: string;
  /** Number of images, 1..`maxImages` (default 1). */
  n?: number;
  /** `WIDTHxHEIGHT` (also `W*H`, `W×H`) or `auto`. */
  size?: string;
}

/** Per-call options of {@link ImageGenerator.generate}. */
export interface GenerateImageOptions {
  /** Where to save the images (default: the generator's `outputDir`). */
  outputDir?: string;
  signal?: AbortSignal;
  /** File name prefix (default `image`); only `[A-Za-z0-9_-]` are kept. */
  fileNamePrefix?: string;
}

/** One image, saved. */
export interface GeneratedImage {
  /** Absolute path of the saved file. */
  path: string;
  mimeType: 'image/png' | 'image/jpeg' | 'image/webp';
  /** File size in bytes. */
  bytes: number;
  width?: number;
  height?: number;
  /** The prompt the model actually used, when the API rewrote it. */
  revisedPrompt?: string;
  /** The (temporary) URL the image was downloaded from, for `url` answers. */
  sourceUrl?: string;
}

/** An image of the answer that could not be saved, while others were. */
export interface ImageFailure {
  index: number;
  code: string;
  message: string;
}

/** The outcome of {@link ImageGenerator.generate}. */
export interface ImageGenerationResult {
  model: string;
  /** The size sent to the API, if any (`1024x1024`). */
  size?: string;
  images: GeneratedImage[];
  /** Images of the answer that could not be saved (the call fails when none could). */
  failures: ImageFailure[];
}

/** A client of an OpenAI-compatible images API that saves what it generates. */
export interface ImageGenerator {
  readonly model: string;
  readonly baseUrl: string;
  readonly maxImages: number;
  readonly sizes: readonly string[] | undefined;
  /**
   * Generate images and save their bytes under `outputDir`.
   *
   * @throws {ToolArgumentError} for an empty prompt, a bad `n` or `size`.
   * @throws {ConfigurationError} when there is no directory to save to.
   * @throws {ImageGenerationError} when the API fails (retryable for 408/429/5xx) or returns no image.
   * @throws {WebFetchError} for timeouts and network failures (retryable).
   */
  generate(
    request: ImageGenerationRequest,
    options?: GenerateImageOptions,
  ): Promise<ImageGenerationResult>;
  close(): Promise<void>;
}

const imageSchema = z.object({
  url: z.string().nullish(),
  b64_json: z.string().nullish(),
  revised_prompt: z.string().nullish(),
});
const answerSchema = z.object({
  created: z.number().nullish(),
  data: z.array(imageSchema).min(1),
});

const SIZE_PATTERN = /^\s*(\d{1,5})\s*[x×*]\s*(\d{1,5})\s*$/i;
const BASE64_PATTERN = /^[A-Za-z0-9+/_-]+={0,2}$/;
// The generation answer carries up to four base64 images; a download carries one image.
const ANSWER_OVERHEAD_BYTES = 1024 * 1024;

/**
 * Check a `size` argument: `WIDTHxHEIGHT` (also `W*H`, `W×H`) with both sides within
 * {@link IMAGE_SIDE_LIMITS}, or `auto`; and, when `allowed` is given, one of those sizes.
 *
 * @param size - The size as given.
 * @param allowed - Sizes the model supports, if known.
 * @returns The normalised size (`1024x1024`, `auto`), or a message saying what is wrong.
 * @example
 * parseImageSize('1024*768'); // { size: '1024x768', width: 1024, height: 768 }
 */
export function parseImageSize(
  size: string,
  allowed?: readonly string[],
): { size: string; width?: number; height?: number } | { error: string } {
  const trimmed = size.trim().toLowerCase();
  const normalisedAllowed = allowed?.map((entry) => normaliseSize(entry));
  const listed =
    normalisedAllowed !== undefined && normalisedAllowed.length > 0
      ? ` Use one of: ${normalisedAllowed.join(', ')}.`
      : '';
  if (trimmed === 'auto') {
    if (normalisedAllowed !== undefined && !normalisedAllowed.includes('auto')) {
      return { error: `This model does not take size "auto".${listed}` };
    }
    return { size: 'auto' };
  }
  const match = SIZE_PATTERN.exec(trimmed);
  if (match === null) {
    return {
      error: `"${size.slice(0, 40)}" is not a size: write WIDTHxHEIGHT in pixels, e.g. 1024x1024.${listed}`,
    };
  }
  const width = Number(match[1]);
  const height = Number(match[2]);
  const { min, max } = IMAGE_SIDE_LIMITS;
  if (width < min || height < min || width > max || height > max) {
    return {
      error: `Size ${width}x${height} is out of range: each side must be between ${min} and ${max} pixels.${listed}`,
    };
  }
  const normalised = `${width}x${height}`;
  if (normalisedAllowed !== undefined && !normalisedAllowed.includes(normalised)) {
    return { error: `This model does not generate ${normalised} images.${listed}` };
  }
  return { size: normalised, width, height };
}

function normaliseSize(size: string): string {
  const match = SIZE_PATTERN.exec(size);
  return match === null ? size.trim().toLowerCase() : `${Number(match[1])}x${Number(match[2])}`;
}

/**
 * Create a client of an OpenAI-compatible images API (`POST {baseUrl}/images/generations`), as
 * spoken by OpenAI (`gpt-image-1`, `dall-e-3`), DashScope/Qwen (`qwen-image`, `wanx`) and most
 * gateways. Every image is saved to disk, whether the API answers base64 (`b64_json`) or a
 * temporary link (`url`, downloaded through the SSRF guard), and checked to really be a PNG, JPEG
 * or WebP image.
 *
 * @param options - Endpoint, key, model, limits.
 * @returns A generator; `close()` it when done.
 * @throws {ConfigurationError} naming `QUIVER_IMAGE_API_KEY` when no key is configured, or
 *   `QUIVER_IMAGE_MODEL` when a non-OpenAI endpoint has no model, or for invalid options.
 * @example
 * const generator = createImageGenerator({ model: 'dall-e-3', sizes: ['1024x1024'], maxImages: 1 });
 * const { images } = await generator.generate({ prompt: 'a lighthouse at dusk' }, { outputDir: './out' });
 * console.log(images[0].path); // ./out/image-….png
 */
export function createImageGenerator(options: ImageGeneratorOptions = {}): ImageGenerator {
  const env = options.env ?? process.env;
  const toolName = options.toolName ?? 'image_gen';
  const fromEnv = (names: readonly string[]): string | undefined =>
    names.map((name) => env[name]?.trim()).find((value) => value !== undefined && value !== '');

  const baseUrlText = (options.baseUrl ?? fromEnv(IMAGE_GEN_ENV.baseUrl) ?? DEFAULT_IMAGE_BASE_URL)
    .trim()
    .replace(/\/+$/, '');
  let base: URL;
  try {
    base = new URL(baseUrlText);
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error('not http(s)');
  } catch (error) {
    throw new ConfigurationError(
      `The images API base URL "${baseUrlText}" is not an absolute http(s) URL. Set ${IMAGE_GEN_ENV.baseUrl[0]} (or pass baseUrl) to e.g. https://api.openai.com/v1.`,
      { cause: error },
    );
  }
  const isOpenAi = base.hostname === 'api.openai.com';
  const isDashScope = base.hostname.endsWith('.aliyuncs.com');

  const apiKey =
    options.apiKey?.trim() ||
    fromEnv([...IMAGE_GEN_ENV.apiKey, ...(isDashScope ? ['DASHSCOPE_API_KEY'] : [])]) ||
    '';
  if (apiKey === '') {
    throw new ConfigurationError(
      `image_gen needs an API key for ${base.host}: set the ${IMAGE_GEN_ENV.apiKey[0]} environment variable (or ${IMAGE_GEN_ENV.apiKey[1]}${isDashScope ? ', DASHSCOPE_API_KEY' : ''}), or pass { apiKey }.`,
    );
  }
  const model =
    options.model?.trim() ||
    fromEnv([IMAGE_GEN_ENV.model]) ||
    (isOpenAi ? DEFAULT_OPENAI_IMAGE_MODEL : '');
  if (model === '') {
    throw new ConfigurationError(
      `image_gen needs a model name for ${base.host}: set the ${IMAGE_GEN_ENV.model} environment variable (e.g. qwen-image-plus, dall-e-3) or pass { model }.`,
    );
  }
  const maxImages = options.maxImages ?? MAX_IMAGES_PER_CALL;
  if (!Number.isInteger(maxImages) || maxImages < 1 || maxImages > MAX_IMAGES_PER_CALL) {
    throw new ConfigurationError(
      `maxImages must be an integer from 1 to ${MAX_IMAGES_PER_CALL}; got ${String(maxImages)}.`,
    );
  }
  const sizes = options.sizes;
  for (const entry of sizes ?? []) {
    const parsed = parseImageSize(entry);
    if ('error' in parsed) throw new ConfigurationError(`Invalid entry in sizes: ${parsed.error}`);
  }
  let defaultSize: string | undefined;
  if (options.defaultSize !== undefined) {
    const parsed = parseImageSize(options.defaultSize, sizes);
    if ('error' in parsed) throw new ConfigurationError(`Invalid defaultSize: ${parsed.error}`);
    defaultSize = parsed.size;
  }
  const responseFormat: ImageResponseFormat =
    options.responseFormat ?? (/^gpt-image/i.test(model) ? 'omit' : 'b64_json');
  const separator = options.sizeSeparator ?? 'x';
  const maxImageBytes = options.maxImageBytes ?? 25 * 1024 * 1024;
  const timeoutMs = options.timeoutMs ?? 150_000;
  const endpoint = joinUrl(base.href, 'images/generations');

  // The API host is configured by the operator, not chosen by the model: trust it like other
  // provider endpoints (a self-hosted gateway often lives on the local network).
  const http =
    options.httpClient ??
    createHttpClient({
      policy: (options.policy ?? createNetworkPolicy()).extend([base.hostname]),
      ...(options.lookup !== undefined ? { lookup: options.lookup } : {}),
    });
  const ownsHttp = options.httpClient === undefined;
  const redact = (text: string): string => text.split(apiKey).join('***');

  async function requestImages(
    body: Record<string, unknown>,
    signal: AbortSignal | undefined,
  ): Promise<z.infer<typeof answerSchema>> {
    const response = await http.fetch(endpoint, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'content-type': 'application/json',
        accept: 'application/json',
      },
      body: JSON.stringify(body),
      maxBytes: MAX_IMAGES_PER_CALL * Math.ceil((maxImageBytes * 4) / 3) + ANSWER_OVERHEAD_BYTES,
      timeoutMs,
      // The API answers directly; a redirect would mean a misconfigured base URL.
      maxRedirects: 2,
      toolName,
      ...(signal !== undefined ? { signal } : {}),
    });
    const text = Buffer.from(response.body).toString('utf8');
    if (response.status < 200 || response.status >= 300) throw apiError(response, text);

    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new ImageGenerationError(
        `The images API at ${base.host} answered HTTP ${response.status} with a body that is not valid JSON (${response.truncated ? 'cut at the size limit' : `${text.length} characters, starting "${redact(text.slice(0, 80))}"`}). Check that ${IMAGE_GEN_ENV.baseUrl[0]} points at an OpenAI-compatible /v1 base URL.`,
        {
          code: SearchToolsErrorCodes.imageGenerationResponse,
          toolName,
          statusCode: response.status,
        },
        { cause: error },
      );
    }
    const parsed = answerSchema.safeParse(json);
    if (!parsed.success) {
      // Some gateways answer errors with status 200 and an `error` object.
      const detail = apiErrorDetail(json);
      if (detail.message !== undefined) throw apiError(response, text);
      const issue = parsed.error.issues[0];
      throw new ImageGenerationError(
        `The images API at ${base.host} answered JSON that is not an Images API response (${issue ? `${issue.path.join('.') || 'root'}: ${issue.message}` : 'unexpected shape'}); expected { data: [{ url | b64_json }] }.`,
        {
          code: SearchToolsErrorCodes.imageGenerationResponse,
          toolName,
          statusCode: response.status,
        },
      );
    }
    return parsed.data;
  }

  function apiError(response: HttpResponse, text: string): ImageGenerationError {
    const status = response.status;
    const detail = apiErrorDetail(safeJson(text));
    const message = redact(detail.message ?? text.replace(/\s+/g, ' ').trim()).slice(0, 400);
    const transient = status < 200 || status >= 300 ? isTransientStatus(status) : false;
    const retryAfterMs = parseRetryAfter(response.headers['retry-after']);
    let advice = '';
    if (status === 401 || status === 403) {
      advice = ` Check the API key (${IMAGE_GEN_ENV.apiKey[0]}).`;
    } else if (status === 404) {
      advice = ` Check the base URL (${IMAGE_GEN_ENV.baseUrl[0]}) and the model name "${model}".`;
    } else if (detail.param === 'response_format') {
      advice = ` This model does not take response_format: set responseFormat to 'omit'.`;
    } else if (transient) {
      advice = ' This is temporary; retry later.';
    } else if (status >= 400 && status < 500) {
      advice = ' Change the prompt or the parameters; the same request will fail again.';
    }
    return new ImageGenerationError(
      `The images API (${model} at ${base.host}) ${status >= 200 && status < 300 ? 'reported an error' : `failed with HTTP ${status}`}${message ? `: ${message}` : ''}.${advice}`,
      {
        code: SearchToolsErrorCodes.imageGeneration,
        toolName,
        statusCode: status,
        isRetryable: transient,
        ...(detail.code !== undefined ? { apiCode: detail.code } : {}),
        ...(transient && retryAfterMs !== undefined ? { retryAfterMs } : {}),
      },
    );
  }

  async function imageBytes(
    item: z.infer<typeof imageSchema>,
    signal: AbortSignal | undefined,
  ): Promise<{ bytes: Uint8Array; sourceUrl?: string }> {
    const b64 = item.b64_json ?? undefined;
    if (b64 !== undefined && b64 !== '') return { bytes: decodeBase64(b64) };
    const url = item.url ?? undefined;
    if (url === undefined || url === '') {
      throw new ImageGenerationError(
        'The images API answered an entry with neither b64_json nor url; nothing to save.',
        { code: SearchToolsErrorCodes.imageGenerationResponse, toolName },
      );
    }
    const dataUrl = /^data:image\/[\w.+-]+;base64,/i.exec(url);
    if (dataUrl !== null) return { bytes: decodeBase64(url.slice(dataUrl[0].length)) };

    const target = http.policy.checkUrl(url);
    const response = await http.fetch(target, {
      // The key only goes back to the API's own origin (gateways that serve files themselves);
      // signed storage links must not receive it.
      headers: {
        accept: 'image/png,image/jpeg,image/webp,image/*;q=0.8',
        ...(target.origin === base.origin ? { authorization: `Bearer ${apiKey}` } : {}),
      },
      maxBytes: maxImageBytes + 1,
      timeoutMs: Math.min(timeoutMs, 60_000),
      maxRedirects: 3,
      toolName,
      ...(signal !== undefined ? { signal } : {}),
      // An expired link typically answers an HTML or XML error page: do not download it.
      shouldReadBody: (head) =>
        head.status >= 200 &&
        head.status < 300 &&
        !/^(text\/|application\/(json|xml|xhtml))/i.test(head.headers['content-type'] ?? ''),
    });
    const shown = redact(url).slice(0, 200);
    if (response.status < 200 || response.status >= 300) {
      const transient = isTransientStatus(response.status);
      const retryAfterMs = parseRetryAfter(response.headers['retry-after']);
      throw new ImageGenerationError(
        `Downloading the generated image ${shown} failed with HTTP ${response.status}.${response.status === 403 || response.status === 404 ? ' Image links from the API expire; generate the image again.' : transient ? ' This is temporary; retry later.' : ''}`,
        {
          code: SearchToolsErrorCodes.imageGeneration,
          toolName,
          statusCode: response.status,
          isRetryable: transient,
          ...(transient && retryAfterMs !== undefined ? { retryAfterMs } : {}),
        },
      );
    }
    if (response.bodySkipped) {
      throw new ImageGenerationError(
        `The generated image link ${shown} answered ${response.headers['content-type'] ?? 'an unknown type'} instead of an image (the link may have expired). Generate the image again.`,
        { code: SearchToolsErrorCodes.invalidImage, toolName, statusCode: response.status },
      );
    }
    if (response.truncated) {
      throw new ImageGenerationError(
        `The generated image at ${shown} is larger than the ${maxImageBytes}-byte limit (maxImageBytes); it was not saved.`,
        { code: SearchToolsErrorCodes.invalidImage, toolName, statusCode: response.status },
      );
    }
    return { bytes: response.body, sourceUrl: url };
  }

  function decodeBase64(text: string): Uint8Array {
    const compact = text.replace(/\s+/g, '');
    if (compact === '' || !BASE64_PATTERN.test(compact)) {
      throw new ImageGenerationError(
        'The images API answered b64_json that is not base64 text; nothing to save.',
        { code: SearchToolsErrorCodes.imageGenerationResponse, toolName },
      );
    }
    const bytes = Buffer.from(
      compact,
      compact.includes('-') || compact.includes('_') ? 'base64url' : 'base64',
    );
    if (bytes.length > maxImageBytes) {
      throw new ImageGenerationError(
        `A generated image is larger than the ${maxImageBytes}-byte limit (maxImageBytes); it was not saved.`,
        { code: SearchToolsErrorCodes.invalidImage, toolName },
      );
    }
    return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
  }

  return {
    model,
    baseUrl: base.href,
    maxImages,
    sizes,
    async generate(request, generateOptions = {}) {
      const issues = validateRequest(request, maxImages, sizes);
      if (issues.length > 0) throw new ToolArgumentError(toolName, issues);
      const outputDir = generateOptions.outputDir ?? options.outputDir;
      if (outputDir === undefined || outputDir.trim() === '') {
        throw new ConfigurationError(
          `${toolName} has nowhere to save images: call the tool with a workDir in its context, or pass outputDir in the options.`,
        );
      }
      const signal = generateOptions.signal;
      signal?.throwIfAborted();
      const n = request.n ?? 1;
      const size =
        request.size !== undefined
          ? (parseImageSize(request.size, sizes) as { size: string }).size
          : defaultSize;
      const wireSize = size === undefined || size === 'auto' ? size : size.replace('x', separator);
      const answer = await requestImages(
        {
          model,
          prompt: request.prompt.trim(),
          n,
          ...(wireSize !== undefined ? { size: wireSize } : {}),
          ...(responseFormat !== 'omit' ? { response_format: responseFormat } : {}),
          ...options.extraBody,
        },
        signal,
      );

      const directory = isAbsolute(outputDir) ? outputDir : resolve(outputDir);
      await mkdir(directory, { recursive: true });
      const prefix =
        (generateOptions.fileNamePrefix ?? 'image').replace(/[^A-Za-z0-9_-]/g, '').slice(0, 40) ||
        'image';
      const stamp = `${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '')}-${randomBytes(3).toString('hex')}`;
      // The API may return more than asked for; never save more than was requested.
      const entries = answer.data.slice(0, n);
      const settled = await Promise.allSettled(
        entries.map(async (item, index): Promise<GeneratedImage> => {
          const { bytes, sourceUrl } = await imageBytes(item, signal);
          const kind = sniffImage(bytes);
          if (kind === undefined) {
            throw new ImageGenerationError(
              `Image ${index + 1} from the images API is not a PNG, JPEG or WebP image (${bytes.length} bytes starting ${Buffer.from(bytes.subarray(0, 8)).toString('hex')}); it was not saved.`,
              { code: SearchToolsErrorCodes.invalidImage, toolName },
            );
          }
          const path = join(directory, `${prefix}-${stamp}-${index + 1}.${kind.extension}`);
          await writeAtomically(path, bytes);
          const revised = item.revised_prompt?.trim();
          return {
            path,
            mimeType: kind.mimeType,
            bytes: bytes.length,
            ...(kind.width !== undefined ? { width: kind.width, height: kind.height! } : {}),
            ...(revised ? { revisedPrompt: revised } : {}),
            ...(sourceUrl !== undefined ? { sourceUrl } : {}),
          };
        }),
      );
      signal?.throwIfAborted();
      const images: GeneratedImage[] = [];
      const failures: ImageFailure[] = [];
      const errors: unknown[] = [];
      settled.forEach((outcome, index) => {
        if (outcome.status === 'fulfilled') {
          images.push(outcome.value);
          return;
        }
        errors.push(outcome.reason);
        const code = (outcome.reason as { code?: unknown }).code;
        failures.push({
          index,
          code: typeof code === 'string' ? code : SearchToolsErrorCodes.imageGeneration,
          message: errorMessage(outcome.reason),
        });
      });
      if (images.length === 0) throw errors[0];
      return { model, ...(size !== undefined ? { size } : {}), images, failures };
    },
    async close() {
      if (ownsHttp) await http.close();
    },
  };
}

/** Argument problems of a request, in the shape `ToolArgumentError` takes. @internal */
export function validateRequest(
  request: ImageGenerationRequest,
  maxImages: number,
  sizes: readonly string[] | undefined,
): Array<{ path: string[]; message: string }> {
  const issues: Array<{ path: string[]; message: string }> = [];
  if (typeof request.prompt !== 'string' || request.prompt.trim() === '') {
    issues.push({
      path: ['prompt'],
      message: 'The prompt is empty: describe the image to generate.',
    });
  }
  if (
    request.n !== undefined &&
    !(Number.isInteger(request.n) && request.n >= 1 && request.n <= maxImages)
  ) {
    issues.push({ path: ['n'], message: countMessage(maxImages, request.n) });
  }
  if (request.size !== undefined) {
    const parsed = parseImageSize(String(request.size), sizes);
    if ('error' in parsed) issues.push({ path: ['size'], message: parsed.error });
  }
  return issues;
}

/** The message for a bad image count. @internal */
export function countMessage(maxImages: number, given?: unknown): string {
  return `n must be a whole number from 1 to ${maxImages}${given !== undefined ? ` (got ${String(given)})` : ''}: ask for fewer images, or call the tool again for more.`;
}

async function writeAtomically(path: string, bytes: Uint8Array): Promise<void> {
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.part`;
  try {
    // `wx`: never overwrite a file someone else wrote under the temporary name.
    await writeFile(temporary, bytes, { flag: 'wx' });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The message, code and parameter of an OpenAI (`{ error: { … } }`) or DashScope (`{ code, message }`) error body. */
function apiErrorDetail(body: unknown): { message?: string; code?: string; param?: string } {
  if (typeof body !== 'object' || body === null) return {};
  const record = body as Record<string, unknown>;
  const error = record.error;
  const source =
    typeof error === 'object' && error !== null ? (error as Record<string, unknown>) : record;
  const text = (value: unknown): string | undefined =>
    typeof value === 'string' && value !== '' ? value : undefined;
  const message = text(source.message) ?? text(error) ?? text(record.message);
  const code = text(source.code) ?? text(source.type);
  const param = text(source.param);
  return {
    ...(message !== undefined ? { message } : {}),
    ...(code !== undefined ? { code } : {}),
    ...(param !== undefined ? { param } : {}),
  };
}
