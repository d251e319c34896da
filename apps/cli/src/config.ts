import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { ConfigurationError } from '@quiver/core';

const configSchema = z.object({
  model: z
    .object({
      baseUrl: z.string().url().optional(),
      apiKey: z.string().optional(),
      model: z.string().optional(),
      contextWindow: z.number().int().positive().optional(),
      temperature: z.number().min(0).max(2).optional(),
    })
    .default({}),
  /** MCP servers in the common `mcpServers` shape (stdio `command`/`args`/`env`/`cwd`, or remote `url`/`headers`). */
  mcpServers: z.record(z.string(), z.record(z.string(), z.unknown())).default({}),
  /** Knowledge bases by name: where each is stored on disk. */
  knowledgeBases: z.record(z.string(), z.object({ path: z.string() })).default({}),
  /** Per-tool configuration, by tool name. */
  tools: z.record(z.string(), z.record(z.string(), z.unknown())).default({}),
  server: z
    .object({
      host: z.string().optional(),
      port: z.number().int().min(0).max(65535).optional(),
      token: z.string().min(8).optional(),
    })
    .default({}),
  /** Where tools write their outputs (charts, downloads). */
  workDir: z.string().optional(),
});

/** The contents of `quiver.config.json`, after environment overrides. */
export type QuiverConfig = z.infer<typeof configSchema>;

/**
 * Load the configuration: `path` (or `$QUIVER_CONFIG`, or `./quiver.config.json` when it exists),
 * then environment overrides: OPENAI_BASE_URL, OPENAI_API_KEY, QUIVER_MODEL, QUIVER_HOST,
 * QUIVER_PORT, QUIVER_SERVER_TOKEN, QUIVER_WORK_DIR.
 * @throws ConfigurationError naming the file and the field that is wrong
 */
export function loadConfig(
  options: { path?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {},
): QuiverConfig & { source?: string } {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const explicit = options.path ?? env.QUIVER_CONFIG;
  const path = explicit ? resolve(cwd, explicit) : resolve(cwd, 'quiver.config.json');
  let raw: unknown = {};
  let source: string | undefined;
  if (existsSync(path)) {
    source = path;
    try {
      raw = JSON.parse(readFileSync(path, 'utf8'));
    } catch (error) {
      throw new ConfigurationError(`${path} is not valid JSON: ${(error as Error).message}`);
    }
  } else if (explicit) {
    throw new ConfigurationError(`The config file ${path} does not exist.`);
  }
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .map((issue) => `"${issue.path.join('.') || '(root)'}": ${issue.message}`)
      .join('; ');
    throw new ConfigurationError(`${source ?? 'The configuration'} is invalid — ${problems}`);
  }
  const config = parsed.data;
  const port = env.QUIVER_PORT !== undefined ? Number(env.QUIVER_PORT) : undefined;
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port < 65536)) {
    throw new ConfigurationError(`QUIVER_PORT must be a port number, got "${env.QUIVER_PORT}".`);
  }
  return {
    ...config,
    model: {
      ...config.model,
      ...(env.OPENAI_BASE_URL ? { baseUrl: env.OPENAI_BASE_URL } : {}),
      ...(env.OPENAI_API_KEY ? { apiKey: env.OPENAI_API_KEY } : {}),
      ...(env.QUIVER_MODEL ? { model: env.QUIVER_MODEL } : {}),
    },
    server: {
      ...config.server,
      ...(env.QUIVER_HOST ? { host: env.QUIVER_HOST } : {}),
      ...(port !== undefined ? { port } : {}),
      ...(env.QUIVER_SERVER_TOKEN ? { token: env.QUIVER_SERVER_TOKEN } : {}),
    },
    ...(env.QUIVER_WORK_DIR ? { workDir: env.QUIVER_WORK_DIR } : {}),
    ...(source ? { source } : {}),
  };
}

/** Why no model can be used, naming the env vars to set; undefined when one is configured. */
export function missingModelReason(config: QuiverConfig): string | undefined {
  if (!config.model.apiKey && !config.model.baseUrl)
    return 'No model endpoint is configured: set OPENAI_API_KEY (and, for another OpenAI-compatible endpoint, OPENAI_BASE_URL) and QUIVER_MODEL, or the "model" section of quiver.config.json.';
  if (!config.model.model)
    return 'No model name is configured: set QUIVER_MODEL (e.g. gpt-4o-mini, or qwen-plus on DashScope), or "model.model" in quiver.config.json.';
  return undefined;
}
