import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { ConfigurationError, ToolArgumentError } from '@quiver/core';
import { Toolkit, ToolRegistry } from '@quiver/core-registry';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createImageGenerator,
  createImageGenTool,
  type GeneratedImage,
  ImageGenerationError,
  imageGenToolFactory,
} from '../src/index.js';
import {
  fixture,
  type FixtureServer,
  sendJson,
  startFixtureServer,
} from './helpers/fixture-server.js';
import { makePng } from './helpers/png.js';

const KEY = 'sk-test-0123456789';
const PNG = makePng(4, 3, [30, 144, 255]);
const JPEG = fixture('images', 'python.jpg');
const WEBP = fixture('images', 'python.webp');
const HTML = '<!doctype html><html><body><h1>Request has expired</h1></body></html>';
const REVISED = 'A watercolour lighthouse on a cliff at dusk, warm light in the lantern room.';

/** The routes answer like the Images API (`{ created, data: [...] }`, `{ error: {...} }` bodies). */
describe('image_gen against an OpenAI-compatible images API on 127.0.0.1', () => {
  let server: FixtureServer;
  let storage: FixtureServer; // a second origin, like the signed storage links real APIs return
  let workDir: string;
  let onHang: (() => void) | undefined;

  const generations = (prefix: string): string => `POST ${prefix}/v1/images/generations`;
  const bodyOf = (index = 0): Record<string, unknown> =>
    JSON.parse(
      server.requests.filter((request) => request.method === 'POST')[index]!.body,
    ) as Record<string, unknown>;
  const tool = (prefix: string, extra: Parameters<typeof createImageGenTool>[0] = {}) =>
    createImageGenTool({
      baseUrl: `${server.origin}${prefix}/v1`,
      apiKey: KEY,
      model: 'qwen-image-plus',
      env: {},
      ...extra,
    });
  const call = async (
    registered: ReturnType<typeof createImageGenTool>,
    args: Record<string, unknown>,
    context: { workDir?: string; language?: 'en' | 'zh' } = { workDir },
  ) => {
    const toolkit = new Toolkit();
    toolkit.register(registered);
    return toolkit.callToCompletion(
      { id: 'img', name: 'image_gen', arguments: JSON.stringify(args) },
      context,
    );
  };
  const errorOf = (response: { metadata?: Record<string, unknown> }) =>
    response.metadata?.error as Record<string, unknown>;

  beforeAll(async () => {
    server = await startFixtureServer();
    storage = await startFixtureServer();
    storage.route('GET /signed/lighthouse.png', (_request, response) => {
      response.writeHead(200, { 'content-type': 'image/png' });
      response.end(PNG);
    });
    server.route('GET /files/same-origin.webp', (_request, response) => {
      response.writeHead(200, { 'content-type': 'image/webp' });
      response.end(WEBP);
    });
    server.route('GET /files/expired.png', (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(HTML);
    });
    server.route('GET /files/disguised.png', (_request, response) => {
      response.writeHead(200, { 'content-type': 'image/png' }); // says PNG, is HTML
      response.end(HTML);
    });
    server.route('GET /files/forbidden.png', (_request, response) => {
      response.writeHead(403, { 'content-type': 'application/xml' });
      response.end(
        '<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>',
      );
    });

    server.route(generations('/url'), (_request, response, body) => {
      const n = (JSON.parse(body) as { n: number }).n;
      const data = [
        {
          url: `${storage.origin}/signed/lighthouse.png?se=2026-11-22&sig=abc`,
          revised_prompt: REVISED,
        },
        { url: `${server.origin}/files/same-origin.webp` },
      ].slice(0, n);
      sendJson(response, JSON.stringify({ created: 1_763_780_000, data }));
    });
    server.route(generations('/b64'), (_request, response, body) => {
      const n = (JSON.parse(body) as { n: number }).n;
      const images = [JPEG, PNG, WEBP, PNG, PNG].slice(0, n + 1); // one more than asked for
      sendJson(
        response,
        JSON.stringify({
          created: 1_763_780_000,
          data: images.map((bytes) => ({ b64_json: bytes.toString('base64') })),
          usage: { total_tokens: 4_160, input_tokens: 50, output_tokens: 4_110 },
        }),
      );
    });
    server.route(generations('/partial'), (_request, response) =>
      sendJson(
        response,
        JSON.stringify({
          data: [
            { b64_json: PNG.toString('base64') },
            { url: `${server.origin}/files/expired.png` },
          ],
        }),
      ),
    );
    server.route(generations('/expired'), (_request, response) =>
      sendJson(response, JSON.stringify({ data: [{ url: `${server.origin}/files/expired.png` }] })),
    );
    server.route(generations('/disguised'), (_request, response) =>
      sendJson(
        response,
        JSON.stringify({ data: [{ url: `${server.origin}/files/disguised.png` }] }),
      ),
    );
    server.route(generations('/forbidden'), (_request, response) =>
      sendJson(
        response,
        JSON.stringify({ data: [{ url: `${server.origin}/files/forbidden.png` }] }),
      ),
    );
    server.route(generations('/metadata'), (_request, response) =>
      sendJson(
        response,
        JSON.stringify({ data: [{ url: 'http://169.254.169.254/latest/meta-data/iam/' }] }),
      ),
    );
    server.route(generations('/bad-request'), (_request, response) =>
      sendJson(
        response,
        JSON.stringify({
          error: {
            message:
              'Your request was rejected as a result of our safety system. Your prompt may contain text that is not allowed by our safety system.',
            type: 'invalid_request_error',
            param: null,
            code: 'content_policy_violation',
          },
        }),
        400,
      ),
    );
    server.route(generations('/unknown-parameter'), (_request, response) =>
      sendJson(
        response,
        JSON.stringify({
          error: {
            message: "Unknown parameter: 'response_format'.",
            type: 'invalid_request_error',
            param: 'response_format',
            code: 'unknown_parameter',
          },
        }),
        400,
      ),
    );
    server.route(generations('/rate-limited'), (_request, response) =>
      sendJson(
        response,
        JSON.stringify({
          error: {
            message: 'Rate limit reached for images per minute. Please try again in 7s.',
            type: 'requests',
            param: null,
            code: 'rate_limit_exceeded',
          },
        }),
        429,
        { 'retry-after': '7' },
      ),
    );
    server.route(generations('/server-error'), (_request, response) =>
      sendJson(
        response,
        JSON.stringify({
          error: {
            message: 'The server had an error while processing your request.',
            type: 'server_error',
          },
        }),
        500,
      ),
    );
    server.route(generations('/malformed'), (_request, response) =>
      sendJson(response, '{"created": 1763780000, "data": [{"b64_json": "iVBORw0KGgo'),
    );
    server.route(generations('/wrong-shape'), (_request, response) =>
      sendJson(response, JSON.stringify({ created: 1_763_780_000, images: ['a.png'] })),
    );
    server.route(generations('/not-base64'), (_request, response) =>
      sendJson(response, JSON.stringify({ data: [{ b64_json: 'this is <not> base64!' }] })),
    );
    // Never answers: for cancellation. The request is parked until the connection closes.
    server.route(generations('/hang'), () => {
      onHang?.();
    });
    // DashScope answers inspection failures as { code, message, request_id }.
    server.route(generations('/dashscope-error'), (_request, response) =>
      sendJson(
        response,
        JSON.stringify({
          request_id: '7f3a9c1e-0d6b-9a1f-b2c4-3e5d7f9a1b2c',
          code: 'DataInspectionFailed',
          message: 'Input data may contain inappropriate content.',
        }),
      ),
    );
  });
  beforeEach(() => {
    server.requests.length = 0;
    storage.requests.length = 0;
    workDir = mkdtempSync(join(tmpdir(), 'quiver-image-gen-'));
  });
  afterAll(async () => {
    await Promise.all([server.close(), storage.close()]);
  });

  it('url answers: downloads each image, saves it in workDir and returns image blocks', async () => {
    const response = await call(tool('/url', { responseFormat: 'url' }), {
      prompt: 'a lighthouse at dusk, watercolour',
      n: 2,
      size: '1024*768',
    });
    expect(response.isError).toBeFalsy();
    expect(bodyOf()).toEqual({
      model: 'qwen-image-plus',
      prompt: 'a lighthouse at dusk, watercolour',
      n: 2,
      size: '1024x768',
      response_format: 'url',
    });
    const apiCall = server.requests.find((request) => request.method === 'POST')!;
    expect(apiCall.headers.authorization).toBe(`Bearer ${KEY}`);
    // The signed storage link (another origin) never receives the key; the API's own origin does.
    expect(storage.requests).toHaveLength(1);
    expect(storage.requests[0]!.headers.authorization).toBeUndefined();
    const sameOrigin = server.requests.find((request) => request.url === '/files/same-origin.webp');
    expect(sameOrigin?.headers.authorization).toBe(`Bearer ${KEY}`);

    const [text, first, second] = response.content;
    expect(first).toMatchObject({ type: 'image', mimeType: 'image/png', alt: REVISED });
    expect(second).toMatchObject({
      type: 'image',
      mimeType: 'image/webp',
      alt: 'a lighthouse at dusk, watercolour',
    });
    const firstPath = (first as { path: string }).path;
    const secondPath = (second as { path: string }).path;
    expect(firstPath.startsWith(workDir)).toBe(true);
    expect(firstPath.endsWith('.png')).toBe(true);
    expect(secondPath.endsWith('.webp')).toBe(true);
    expect(readFileSync(firstPath).equals(PNG)).toBe(true);
    expect(readFileSync(secondPath).equals(WEBP)).toBe(true);
    expect(readdirSync(workDir).sort()).toHaveLength(2); // no .part files left behind
    expect(text).toMatchObject({ type: 'text' });
    const description = (text as { text: string }).text;
    expect(description).toContain('Generated 2 images with qwen-image-plus (1024x768):');
    expect(description).toContain(`1. ${firstPath} (4×3, image/png, `);
    expect(description).toContain(`Revised prompt: ${REVISED}`);
    const images = response.metadata?.images as GeneratedImage[];
    expect(images[0]).toMatchObject({
      width: 4,
      height: 3,
      bytes: PNG.length,
      revisedPrompt: REVISED,
      sourceUrl: `${storage.origin}/signed/lighthouse.png?se=2026-11-22&sig=abc`,
    });
    rmSync(workDir, { recursive: true, force: true });
  });

  it('b64_json answers: decodes, checks the magic bytes, names files by the real type', async () => {
    const response = await call(
      tool('/b64', { model: 'gpt-image-1', inlineImages: true }),
      { prompt: '一只在竹林里的熊猫', n: 3 },
      { workDir, language: 'zh' },
    );
    expect(response.isError).toBeFalsy();
    // GPT image models reject response_format, so none is sent; no size: the API's default.
    expect(bodyOf()).toEqual({ model: 'gpt-image-1', prompt: '一只在竹林里的熊猫', n: 3 });
    const blocks = response.content.filter((block) => block.type === 'image') as Array<{
      path: string;
      mimeType: string;
      data?: string;
    }>;
    // The server sent four images for n = 3: only three are saved.
    expect(blocks.map((block) => block.mimeType)).toEqual([
      'image/jpeg',
      'image/png',
      'image/webp',
    ]);
    expect(blocks.map((block) => block.path.split('.').pop())).toEqual(['jpg', 'png', 'webp']);
    expect(readFileSync(blocks[0]!.path).equals(JPEG)).toBe(true);
    expect(blocks[1]!.data).toBe(PNG.toString('base64'));
    expect(readdirSync(workDir)).toHaveLength(3);
    expect((response.content[0] as { text: string }).text).toContain(
      '已用 gpt-image-1 生成 3 张图片：',
    );
    expect((response.metadata?.images as GeneratedImage[])[0]).toMatchObject({
      width: 16,
      height: 16,
    });
    rmSync(workDir, { recursive: true, force: true });
  });

  it('saves to the configured outputDir and sends the DashScope size format', async () => {
    const outputDir = join(workDir, 'nested', 'images');
    const response = await call(
      tool('/b64', { outputDir, sizeSeparator: '*', defaultSize: '1328x1328' }),
      { prompt: 'a teapot' },
      {},
    );
    expect(response.isError).toBeFalsy();
    expect(bodyOf()).toMatchObject({ size: '1328*1328', n: 1, response_format: 'b64_json' });
    expect(readdirSync(outputDir)).toHaveLength(1);
    rmSync(workDir, { recursive: true, force: true });
  });

  it('keeps the images it could save and reports the ones it could not', async () => {
    const response = await call(tool('/partial'), { prompt: 'two cats', n: 2 });
    expect(response.isError).toBeFalsy();
    expect(response.content.filter((block) => block.type === 'image')).toHaveLength(1);
    expect(response.metadata?.failures).toEqual([
      expect.objectContaining({ index: 1, code: 'image_invalid' }),
    ]);
    expect((response.content[0] as { text: string }).text).toContain(
      'Note: image 2 could not be saved',
    );
    rmSync(workDir, { recursive: true, force: true });
  });

  it('a link that answers HTML instead of an image is an error, not a saved file', async () => {
    const expired = await call(tool('/expired'), { prompt: 'a cat' });
    expect(expired.isError).toBe(true);
    expect(errorOf(expired)).toMatchObject({ code: 'image_invalid', isRetryable: false });
    expect(errorOf(expired).message).toContain(
      'answered text/html; charset=utf-8 instead of an image',
    );

    const disguised = await call(tool('/disguised'), { prompt: 'a cat' });
    expect(errorOf(disguised)).toMatchObject({ code: 'image_invalid' });
    expect(errorOf(disguised).message).toContain('is not a PNG, JPEG or WebP image');

    const forbidden = await call(tool('/forbidden'), { prompt: 'a cat' });
    expect(errorOf(forbidden)).toMatchObject({
      code: 'image_generation_error',
      statusCode: 403,
      isRetryable: false,
    });
    expect(errorOf(forbidden).message).toContain('Image links from the API expire');
    expect(readdirSync(workDir)).toEqual([]);
    rmSync(workDir, { recursive: true, force: true });
  });

  it('image links go through the SSRF guard (the API host is trusted, the metadata address is not)', async () => {
    const response = await call(tool('/metadata'), { prompt: 'a cat' });
    expect(errorOf(response)).toMatchObject({ code: 'url_blocked', range: 'link-local' });
  });

  it('400: not retryable, carries the API message and code', async () => {
    const response = await call(tool('/bad-request'), { prompt: 'something not allowed' });
    expect(response.isError).toBe(true);
    expect(errorOf(response)).toMatchObject({
      code: 'image_generation_error',
      statusCode: 400,
      apiCode: 'content_policy_violation',
      isRetryable: false,
      toolName: 'image_gen',
    });
    expect(errorOf(response).message).toContain(
      'failed with HTTP 400: Your request was rejected as a result of our safety system.',
    );
    expect(errorOf(response).message).not.toContain(KEY);

    const unknown = await call(tool('/unknown-parameter'), { prompt: 'a cat' });
    expect(errorOf(unknown).message).toContain("set responseFormat to 'omit'");
  });

  it('429 is retryable with retryAfterMs from Retry-After; 500 is retryable', async () => {
    const limited = await call(tool('/rate-limited'), { prompt: 'a cat' });
    expect(errorOf(limited)).toMatchObject({
      code: 'image_generation_error',
      statusCode: 429,
      apiCode: 'rate_limit_exceeded',
      isRetryable: true,
      retryAfterMs: 7_000,
    });
    const failed = await call(tool('/server-error'), { prompt: 'a cat' });
    expect(errorOf(failed)).toMatchObject({ statusCode: 500, isRetryable: true });
    expect(errorOf(failed).message).toContain('retry later');
    expect(errorOf(failed)).not.toHaveProperty('retryAfterMs');
  });

  it('malformed JSON, a wrong shape and bad base64 are clear bad-response errors', async () => {
    const malformed = await call(tool('/malformed'), { prompt: 'a cat' });
    expect(errorOf(malformed)).toMatchObject({
      code: 'image_generation_bad_response',
      isRetryable: false,
    });
    expect(errorOf(malformed).message).toContain('is not valid JSON');
    const wrong = await call(tool('/wrong-shape'), { prompt: 'a cat' });
    expect(errorOf(wrong).code).toBe('image_generation_bad_response');
    expect(errorOf(wrong).message).toContain('data: ');
    const notBase64 = await call(tool('/not-base64'), { prompt: 'a cat' });
    expect(errorOf(notBase64).message).toContain('b64_json that is not base64');
    const dashscope = await call(tool('/dashscope-error'), { prompt: 'a cat' });
    expect(errorOf(dashscope)).toMatchObject({
      code: 'image_generation_error',
      apiCode: 'DataInspectionFailed',
    });
    expect(errorOf(dashscope).message).toContain('Input data may contain inappropriate content.');
  });

  it('invalid count and size are refused with clear messages before any request', async () => {
    const limited = tool('/b64', { sizes: ['1024x1024', '1792x1024'], maxImages: 2 });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ prompt: 'a cat', n: 5 }, 'n must be a whole number from 1 to 2'],
      [{ prompt: 'a cat', n: 0 }, 'n must be a whole number from 1 to 2'],
      [{ prompt: 'a cat', n: 1.5 }, 'expected integer (How many images, 1 to 2'],
      [{ prompt: 'a cat', size: 'huge' }, '"huge" is not a size: write WIDTHxHEIGHT'],
      [{ prompt: 'a cat', size: '512x512' }, 'Use one of: 1024x1024, 1792x1024.'],
      [{ prompt: '   ' }, 'The prompt is empty'],
    ];
    for (const [args, message] of cases) {
      const response = await call(limited, args);
      expect(response.isError).toBe(true);
      expect(errorOf(response).code).toBe('tool_argument_invalid');
      expect(errorOf(response).message).toContain(message);
    }
    const unlimited = await call(tool('/b64'), { prompt: 'a cat', size: '64x64' });
    expect(errorOf(unlimited).message).toContain('each side must be between 256 and 4096');
    expect(server.requests).toHaveLength(0);

    // The generator used directly validates the same way.
    const generator = createImageGenerator({
      baseUrl: `${server.origin}/b64/v1`,
      apiKey: KEY,
      model: 'm',
      env: {},
    });
    await expect(
      generator.generate({ prompt: 'a cat', n: 9 }, { outputDir: workDir }),
    ).rejects.toThrow(ToolArgumentError);
    await expect(generator.generate({ prompt: 'a cat' })).rejects.toThrow(
      /nowhere to save images: call the tool with a workDir/,
    );
    await generator.close();
    expect(server.requests).toHaveLength(0);
    rmSync(workDir, { recursive: true, force: true });
  });

  it('a missing key or model is a ConfigurationError naming the variable', () => {
    expect(() => createImageGenTool({ env: {} })).toThrow(ConfigurationError);
    expect(() => createImageGenTool({ env: {} })).toThrow(
      /set the QUIVER_IMAGE_API_KEY environment variable \(or OPENAI_API_KEY\)/,
    );
    expect(() =>
      createImageGenTool({
        env: { QUIVER_IMAGE_BASE_URL: 'https://dashscope.aliyuncs.com/compatible-mode/v1' },
      }),
    ).toThrow(/QUIVER_IMAGE_API_KEY .*DASHSCOPE_API_KEY/);
    expect(() =>
      createImageGenTool({
        env: { QUIVER_IMAGE_BASE_URL: server.origin, QUIVER_IMAGE_API_KEY: 'k' },
      }),
    ).toThrow(/set the QUIVER_IMAGE_MODEL environment variable/);
    expect(() => createImageGenTool({ env: {}, apiKey: 'k', baseUrl: 'ftp://x' })).toThrow(
      /not an absolute http\(s\) URL/,
    );
    expect(() => createImageGenTool({ env: {}, apiKey: 'k', maxImages: 5 })).toThrow(
      /maxImages must be an integer from 1 to 4/,
    );
    // OpenAI needs no model setting: gpt-image-1 is the default there.
    const openai = createImageGenerator({ env: { OPENAI_API_KEY: 'k' } });
    expect([openai.model, openai.baseUrl]).toEqual(['gpt-image-1', 'https://api.openai.com/v1']);
    return openai.close();
  });

  it('reads endpoint, key and model from the environment; the factory builds it for a registry', async () => {
    const registry = new ToolRegistry();
    registry.register(imageGenToolFactory);
    expect(() => registry.getTool('image_gen', { env: {} })).toThrow(/QUIVER_IMAGE_API_KEY/);
    const built = registry.getTool('image_gen', {
      env: {
        QUIVER_IMAGE_BASE_URL: `${server.origin}/b64/v1`,
        QUIVER_IMAGE_API_KEY: KEY,
        QUIVER_IMAGE_MODEL: 'wanx2.1-t2i-turbo',
        OPENAI_API_KEY: 'sk-not-this-one',
      },
    }) as ReturnType<typeof createImageGenTool>;
    expect(built.definition('zh').description).toContain('根据文字描述生成图片');
    expect(built.definition('en').description).toContain('Generate images');
    const response = await call(built, { prompt: 'a kite' });
    expect(response.isError).toBeFalsy();
    expect(bodyOf()).toMatchObject({ model: 'wanx2.1-t2i-turbo' });
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    rmSync(workDir, { recursive: true, force: true });
  });

  it('honours the call signal: cancelling while the API is generating ends the call', async () => {
    const controller = new AbortController();
    onHang = () => controller.abort();
    const toolkit = new Toolkit();
    toolkit.register(tool('/hang'));
    const response = await toolkit.callToCompletion(
      { id: 'c', name: 'image_gen', arguments: '{"prompt":"a cat"}' },
      { workDir, signal: controller.signal },
    );
    onHang = undefined;
    expect(response.isError).toBe(true);
    expect(errorOf(response).code).toBe('tool_aborted');
    expect(readdirSync(workDir)).toEqual([]);
    rmSync(workDir, { recursive: true, force: true });
  });

  it('errors thrown by the generator are typed', async () => {
    const generator = createImageGenerator({
      baseUrl: `${server.origin}/rate-limited/v1`,
      apiKey: KEY,
      model: 'm',
      env: {},
    });
    const error = await generator
      .generate({ prompt: 'a cat' }, { outputDir: workDir })
      .catch((caught: unknown) => caught);
    await generator.close();
    expect(error).toBeInstanceOf(ImageGenerationError);
    expect(error).toMatchObject({ statusCode: 429, isRetryable: true, retryAfterMs: 7_000 });
    rmSync(workDir, { recursive: true, force: true });
  });
});
