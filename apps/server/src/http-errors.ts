import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';

/** The JSON body of every error answer: `{ error: { code, message, issues? } }`. */
export function errorBody(code: string, message: string, issues?: unknown) {
  return { error: { code, message, ...(issues !== undefined ? { issues } : {}) } };
}

/** Answer with an error. */
export function fail(
  c: Context,
  status: ContentfulStatusCode,
  code: string,
  message: string,
  issues?: unknown,
) {
  return c.json(errorBody(code, message, issues), status);
}

/** Parse a JSON body with a zod schema; `undefined` plus a 400 answer when it does not fit. */
export async function readJson<T>(
  c: Context,
  schema: z.ZodType<T>,
): Promise<{ ok: true; value: T } | { ok: false; response: Response }> {
  let body: unknown;
  try {
    const text = await c.req.text();
    body = text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    return {
      ok: false,
      response: fail(c, 400, 'invalid_json', 'The request body is not valid JSON.'),
    };
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({
      path: issue.path.map(String).join('.'),
      message: issue.message,
    }));
    const summary = issues.map((issue) => `${issue.path || 'body'}: ${issue.message}`).join('; ');
    return {
      ok: false,
      response: fail(c, 400, 'invalid_request', `Invalid request body — ${summary}`, issues),
    };
  }
  return { ok: true, value: parsed.data };
}
