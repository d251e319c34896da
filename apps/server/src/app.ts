import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import { Hono } from 'hono';
import type { Context, Next } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import type { ToolResponse } from '@quiver/core';
import { ConfigurationError, chatMessageSchema, errorMessage, localize } from '@quiver/core';
import { mergeResponses } from '@quiver/core-registry';
import { fail, readJson } from './http-errors.js';
import type { ServerServices } from './services.js';

/** Options of {@link createApp}. */
export interface AppOptions {
  /** Require `Authorization: Bearer <token>` on the API and MCP endpoints. */
  token?: string;
  /** Largest JSON body, in bytes. Default 1 MiB. */
  maxJsonBytes?: number;
  /** Largest uploaded file, in bytes. Default 20 MiB. */
  maxUploadBytes?: number;
  /** Where uploads are stored. */
  uploadDir: string;
  /** Folder of the web UI's files. */
  webDir: string;
  /** Per-session state bags, so stateful tools (kernels) keep state across calls of one session. */
  sessions?: Map<string, Map<string, unknown>>;
  /**
   * Host names the server answers to (the `Host` header), e.g. the loopback names when bound to
   * 127.0.0.1: a DNS-rebinding page (evil.example resolving to 127.0.0.1) is refused. Default: any.
   */
  allowedHostnames?: string[];
  /** Browser origins allowed besides the server's own (cross-origin requests are refused). */
  allowedOrigins?: string[];
  /**
   * Session state bags kept at once; the least recently used is forgotten beyond it (its kernel
   * then ends by the interpreter's idle timeout). Default 10 000.
   */
  maxSessions?: number;
}

const callBody = z.object({
  arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).default({}),
  sessionId: z.string().min(1).max(128).optional(),
  stream: z.boolean().optional(),
});
const NO_MODEL =
  'No chat model is configured: set OPENAI_API_KEY (plus OPENAI_BASE_URL and QUIVER_MODEL for other OpenAI-compatible endpoints) and restart the server.';

const groupBody = z.object({ active: z.boolean() });
const chatBody = z.object({
  messages: z.array(chatMessageSchema).min(1).max(500),
  files: z.array(z.string()).max(50).default([]),
  resume: z
    .object({
      state: z.unknown(),
      decisions: z.array(
        z.object({ toolCallId: z.string(), approved: z.boolean(), message: z.string().optional() }),
      ),
    })
    .optional(),
});
const pageBody = z.object({
  url: z.string().url(),
  title: z.string().max(1000).optional(),
  content: z.string().optional(),
});
const pageSelectBody = z.object({ selected: z.boolean() });
const currentPageBody = z
  .object({ id: z.string().optional(), url: z.string().url().optional() })
  .refine((body) => body.id !== undefined || body.url !== undefined, {
    message: 'give the page id or url',
  });
const kbDocumentsBody = z.object({ paths: z.array(z.string().min(1)).min(1).max(1000) });

/**
 * Build the HTTP application: REST + SSE over the services, `/mcp`, and the web UI at `/`.
 * Routing only; `startServer` binds it to a socket.
 */
export function createApp(services: ServerServices, options: AppOptions): Hono {
  const app = new Hono();
  const maxJsonBytes = options.maxJsonBytes ?? 1024 * 1024;
  const maxUploadBytes = options.maxUploadBytes ?? 20 * 1024 * 1024;
  const sessions = options.sessions ?? new Map<string, Map<string, unknown>>();
  const { toolkit } = services;

  const jsonLimit = bodyLimit({
    maxSize: maxJsonBytes,
    onError: (c) =>
      fail(c, 413, 'body_too_large', `The request body is larger than ${maxJsonBytes} bytes.`),
  });
  const requireToken = async (c: Context, next: Next) => {
    if (options.token === undefined) return next();
    const header = c.req.header('authorization') ?? '';
    if (header !== `Bearer ${options.token}`) {
      return fail(
        c,
        401,
        'unauthorized',
        'Missing or wrong bearer token: send "Authorization: Bearer <token>".',
      );
    }
    return next();
  };

  app.onError((error, c) =>
    // A caller's mistake (a bad knowledge-base name…) is a 400, not a server failure.
    error instanceof ConfigurationError
      ? fail(c, 400, 'invalid_request', error.message)
      : fail(c, 500, 'internal_error', errorMessage(error)),
  );
  app.notFound((c) => fail(c, 404, 'not_found', `No route for ${c.req.method} ${c.req.path}.`));

  app.get('/healthz', (c) => c.json({ ok: true, tools: toolkit.list().length }));

  // Browsers may send "simple" cross-site POSTs without a preflight: a page on another origin
  // must not be able to run tools (code execution!) on this machine. Same for DNS rebinding.
  app.use('*', async (c, next) => {
    const host = c.req.header('host') ?? '';
    if (options.allowedHostnames && !options.allowedHostnames.includes(hostnameOf(host))) {
      return fail(
        c,
        403,
        'host_not_allowed',
        `This server answers to ${options.allowedHostnames.join(', ')}, not "${host}".`,
      );
    }
    const origin = c.req.header('origin');
    if (origin !== undefined && !options.allowedOrigins?.includes(origin)) {
      let originHost: string | undefined;
      try {
        originHost = new URL(origin).host;
      } catch {
        originHost = undefined;
      }
      if (originHost !== host) {
        return fail(
          c,
          403,
          'cross_origin',
          `Requests from pages of ${origin} are refused: the API answers the pages it serves (list other origins in allowedOrigins).`,
        );
      }
    }
    return next();
  });
  app.use('/v1/*', requireToken);
  app.use('/mcp', requireToken);

  app.get('/v1/info', (c) =>
    c.json({
      chat: {
        available: services.chat !== undefined && services.chat.unavailableReason === undefined,
        reason: services.chat?.unavailableReason ?? NO_MODEL,
      },
      knowledgeBases: services.knowledgeBases !== undefined,
      mcp: services.mcp !== undefined,
      pages: services.pages !== undefined,
    }),
  );

  app.get('/v1/tools', (c) => {
    const language = c.req.query('lang') === 'zh' ? 'zh' : 'en';
    return c.json({
      tools: toolkit.list().map((tool) => ({
        name: tool.name,
        group: tool.group,
        active: toolkit.isActive(tool.name),
        description: localize(tool.description, language),
        parameters: tool.modelParameters,
        flags: tool.tool.flags,
        needsApproval: tool.tool.needsApproval !== false,
      })),
      groups: toolkit.groups(),
    });
  });

  app.patch('/v1/groups/:name', jsonLimit, async (c) => {
    const body = await readJson(c, groupBody);
    if (!body.ok) return body.response;
    const name = c.req.param('name');
    const missing = body.value.active
      ? toolkit.activateGroups([name])
      : toolkit.deactivateGroups([name]);
    if (missing.length > 0)
      return fail(c, 404, 'group_not_found', `No tool group named "${name}".`);
    return c.json({ groups: toolkit.groups() });
  });

  app.post('/v1/tools/:name/call', jsonLimit, async (c) => {
    const body = await readJson(c, callBody);
    if (!body.ok) return body.response;
    const name = c.req.param('name');
    const { arguments: args, sessionId } = body.value;
    const wantsStream =
      body.value.stream === true || (c.req.header('accept') ?? '').includes('text/event-stream');
    const toolCall = {
      id: `http-${randomUUID()}`,
      name,
      arguments: typeof args === 'string' ? args : JSON.stringify(args),
    };
    const state = sessionState(sessions, sessionId, options.maxSessions ?? 10_000);
    const signal = c.req.raw.signal;
    if (!wantsStream) {
      const response = await toolkit.callToCompletion(toolCall, { signal, state });
      return c.json({ callId: toolCall.id, response }, response.isError ? 422 : 200);
    }
    return streamSSE(c, async (stream) => {
      const controller = new AbortController();
      stream.onAbort(() => controller.abort(new Error('client disconnected')));
      const chunks: ToolResponse[] = [];
      for await (const chunk of toolkit.call(toolCall, { signal: controller.signal, state })) {
        chunks.push(chunk);
        if (stream.aborted) break;
        await stream.writeSSE({ event: 'chunk', data: JSON.stringify(chunk) });
      }
      if (!stream.aborted)
        await stream.writeSSE({
          event: 'end',
          data: JSON.stringify({ callId: toolCall.id, response: mergeResponses(chunks) }),
        });
    });
  });

  app.post(
    '/v1/files',
    bodyLimit({
      maxSize: maxUploadBytes,
      onError: (c) =>
        fail(c, 413, 'file_too_large', `Uploads are limited to ${maxUploadBytes} bytes.`),
    }),
    async (c) => {
      let form: Record<string, unknown>;
      try {
        form = await c.req.parseBody();
      } catch {
        return fail(
          c,
          400,
          'invalid_upload',
          'Send the file as multipart/form-data in a field named "file".',
        );
      }
      const file = form.file;
      if (!(file instanceof File)) {
        return fail(
          c,
          400,
          'invalid_upload',
          'Send the file as multipart/form-data in a field named "file".',
        );
      }
      const safeName =
        basename(file.name)
          .replace(/[^\w.\-\u4e00-\u9fff]+/g, '_')
          .slice(-120) || 'upload';
      await mkdir(options.uploadDir, { recursive: true });
      const path = join(options.uploadDir, `${randomUUID().slice(0, 8)}-${safeName}`);
      await writeFile(path, Buffer.from(await file.arrayBuffer()));
      return c.json(
        { path, name: file.name, size: file.size, mimeType: file.type || undefined },
        201,
      );
    },
  );

  app.post('/v1/chat', jsonLimit, async (c) => {
    const chat = services.chat;
    if (!chat || chat.unavailableReason !== undefined) {
      return fail(c, 503, 'chat_unavailable', chat?.unavailableReason ?? NO_MODEL);
    }
    const body = await readJson(c, chatBody);
    if (!body.ok) return body.response;
    return streamSSE(c, async (stream) => {
      const controller = new AbortController();
      stream.onAbort(() => controller.abort(new Error('client disconnected')));
      try {
        for await (const event of chat.run({ ...body.value, signal: controller.signal })) {
          if (stream.aborted) break;
          await stream.writeSSE({ event: event.type, data: JSON.stringify(event) });
        }
      } catch (error) {
        if (!stream.aborted)
          await stream.writeSSE({
            event: 'error',
            data: JSON.stringify({ type: 'error', message: errorMessage(error) }),
          });
      }
      if (!stream.aborted) await stream.writeSSE({ event: 'done', data: '{}' });
    });
  });

  app.post('/v1/kb/:name/documents', jsonLimit, async (c) => {
    const kb = services.knowledgeBases;
    if (!kb)
      return fail(c, 503, 'kb_unavailable', 'Knowledge bases are not enabled on this server.');
    const body = await readJson(c, kbDocumentsBody);
    if (!body.ok) return body.response;
    const result = await kb.addDocuments(c.req.param('name'), body.value.paths, {
      signal: c.req.raw.signal,
    });
    return c.json(result);
  });

  app.get('/v1/kb/:name/search', async (c) => {
    const kb = services.knowledgeBases;
    if (!kb)
      return fail(c, 503, 'kb_unavailable', 'Knowledge bases are not enabled on this server.');
    const query = c.req.query('q') ?? c.req.query('query') ?? '';
    if (query.trim() === '') return fail(c, 400, 'invalid_request', 'Pass the search text as ?q=…');
    const topK = Math.min(Math.max(Number(c.req.query('topK') ?? 5) || 5, 1), 50);
    const chunks = await kb.search(c.req.param('name'), query, { topK, signal: c.req.raw.signal });
    return c.json({ chunks });
  });

  const pagesUnavailable = (c: Context) =>
    fail(c, 503, 'pages_unavailable', 'The page cache is not enabled on this server.');

  app.post('/v1/pages', jsonLimit, async (c) => {
    const pages = services.pages;
    if (!pages) return pagesUnavailable(c);
    const body = await readJson(c, pageBody);
    if (!body.ok) return body.response;
    try {
      return c.json({ page: await pages.add(body.value) }, 202);
    } catch (error) {
      return fail(c, 400, 'invalid_url', errorMessage(error));
    }
  });

  app.get('/v1/pages', (c) => {
    const pages = services.pages;
    if (!pages) return pagesUnavailable(c);
    return c.json({ pages: pages.list(), currentPageId: pages.current()?.id ?? null });
  });

  app.post('/v1/pages/current', jsonLimit, async (c) => {
    const pages = services.pages;
    if (!pages) return pagesUnavailable(c);
    const body = await readJson(c, currentPageBody);
    if (!body.ok) return body.response;
    const page = await pages.setCurrent(body.value);
    if (!page) return fail(c, 404, 'page_not_found', 'No such page in the history.');
    return c.json({ page });
  });

  app.patch('/v1/pages/:id', jsonLimit, async (c) => {
    const pages = services.pages;
    if (!pages) return pagesUnavailable(c);
    const body = await readJson(c, pageSelectBody);
    if (!body.ok) return body.response;
    const page = await pages.setSelected(c.req.param('id'), body.value.selected);
    if (!page) return fail(c, 404, 'page_not_found', `No page with id ${c.req.param('id')}.`);
    return c.json({ page });
  });

  app.all('/mcp', async (c) => {
    if (!services.mcp)
      return fail(c, 503, 'mcp_unavailable', 'The MCP endpoint is not enabled on this server.');
    return services.mcp.handle(c.req.raw);
  });

  // The web UI: a few static files.
  const types: Record<string, string> = {
    '.html': 'text/html; charset=utf-8',
    '.js': 'text/javascript; charset=utf-8',
    '.css': 'text/css; charset=utf-8',
  };
  app.get('/', (c) => serveStatic(c, options.webDir, 'index.html', types));
  app.get('/ui/:file', (c) => serveStatic(c, options.webDir, c.req.param('file'), types));

  return app;
}

async function serveStatic(c: Context, dir: string, file: string, types: Record<string, string>) {
  const type = types[extname(file)];
  if (!type || basename(file) !== file) return fail(c, 404, 'not_found', `No file ${file}.`);
  try {
    const body = await readFile(join(dir, file));
    return c.body(body, 200, { 'content-type': type, 'cache-control': 'no-cache' });
  } catch {
    return fail(c, 404, 'not_found', `No file ${file}.`);
  }
}

function sessionState(
  sessions: Map<string, Map<string, unknown>>,
  sessionId: string | undefined,
  maxSessions: number,
): Map<string, unknown> {
  if (sessionId === undefined) return new Map();
  let state = sessions.get(sessionId);
  if (state) {
    // Most recently used last: a Map iterates in insertion order.
    sessions.delete(sessionId);
  } else {
    state = new Map([['sessionId', sessionId]]);
    while (sessions.size >= maxSessions) sessions.delete(sessions.keys().next().value!);
  }
  sessions.set(sessionId, state);
  return state;
}

/** The host name of a Host header (`127.0.0.1:7860` → `127.0.0.1`, `[::1]:80` → `[::1]`). */
function hostnameOf(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  return host.split(':')[0] ?? '';
}
