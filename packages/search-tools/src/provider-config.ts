import { ConfigurationError } from '@quiver/core';
import { createBingProvider } from './providers/bing.js';
import { createBraveProvider } from './providers/brave.js';
import { createSearxngProvider } from './providers/searxng.js';
import { createSerperProvider } from './providers/serper.js';
import { createTavilyProvider } from './providers/tavily.js';
import type { SearchProvider } from './search-types.js';

/** The built-in providers. */
export type ProviderName = 'searxng' | 'brave' | 'tavily' | 'serper' | 'bing';

/** A built-in provider with explicit settings (anything left out is read from the environment). */
export interface ProviderConfig {
  provider: ProviderName;
  /** API key (Brave, Tavily, Serper, Bing). */
  apiKey?: string;
  /** Endpoint base URL; for SearXNG, the instance URL. */
  baseUrl?: string;
}

/** What `providers` accepts: a name, a config, or any custom {@link SearchProvider}. */
export type ProviderSpec = ProviderName | ProviderConfig | SearchProvider;

/** Environment variables read for each built-in provider. */
export const PROVIDER_ENV: Record<ProviderName, { variable: string; label: string }> = {
  searxng: { variable: 'SEARXNG_URL', label: 'SearXNG instance URL' },
  brave: { variable: 'BRAVE_API_KEY', label: 'Brave Search API key' },
  tavily: { variable: 'TAVILY_API_KEY', label: 'Tavily API key' },
  serper: { variable: 'SERPER_API_KEY', label: 'Serper API key' },
  bing: { variable: 'BING_API_KEY', label: 'Bing Search v7 subscription key' },
};

/** Environment variable that chooses providers by name, e.g. `QUIVER_SEARCH_PROVIDERS=brave,searxng`. */
export const PROVIDERS_ENV_VARIABLE = 'QUIVER_SEARCH_PROVIDERS';

const NAMES = Object.keys(PROVIDER_ENV) as ProviderName[];

function isProviderName(value: string): value is ProviderName {
  return (NAMES as string[]).includes(value);
}

/**
 * Turn provider specs (or, without any, the environment) into providers.
 *
 * - explicit `specs` win; names and configs take missing keys from `env`;
 * - else `QUIVER_SEARCH_PROVIDERS` (comma-separated names) chooses;
 * - else every provider whose variable is set (`SEARXNG_URL`, `BRAVE_API_KEY`, `TAVILY_API_KEY`,
 *   `SERPER_API_KEY`, `BING_API_KEY`) is used, in that order.
 *
 * @param specs - Providers to use, if chosen in code.
 * @param env - The environment (default `process.env`).
 * @returns At least one provider.
 * @throws {ConfigurationError} naming the variable to set when a chosen provider has no key/URL,
 *   when a name is unknown, or when nothing is configured.
 * @example
 * const providers = resolveSearchProviders(['brave'], { BRAVE_API_KEY: 'key' });
 */
export function resolveSearchProviders(
  specs?: readonly ProviderSpec[],
  env: Record<string, string | undefined> = process.env,
): SearchProvider[] {
  let chosen: readonly ProviderSpec[];
  if (specs !== undefined && specs.length > 0) {
    chosen = specs;
  } else if (env[PROVIDERS_ENV_VARIABLE]?.trim()) {
    chosen = env[PROVIDERS_ENV_VARIABLE]!.split(',')
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean)
      .map((name) => {
        if (!isProviderName(name)) {
          throw new ConfigurationError(
            `${PROVIDERS_ENV_VARIABLE} names an unknown search provider "${name}". Use a comma-separated list of: ${NAMES.join(', ')}.`,
          );
        }
        return name;
      });
  } else {
    chosen = NAMES.filter((name) => (env[PROVIDER_ENV[name].variable] ?? '').trim() !== '');
    if (chosen.length === 0) {
      throw new ConfigurationError(
        `No web search provider is configured. Set one of ${NAMES.map((name) => PROVIDER_ENV[name].variable).join(', ')} (and optionally ${PROVIDERS_ENV_VARIABLE} to choose among them), or pass \`providers\`.`,
      );
    }
  }
  return chosen.map((spec) =>
    typeof spec === 'object' && 'search' in spec ? spec : createNamedProvider(spec, env),
  );
}

function createNamedProvider(
  spec: ProviderName | ProviderConfig,
  env: Record<string, string | undefined>,
): SearchProvider {
  const config: ProviderConfig = typeof spec === 'string' ? { provider: spec } : spec;
  if (!isProviderName(config.provider)) {
    throw new ConfigurationError(
      `Unknown search provider "${String(config.provider)}". Use one of: ${NAMES.join(', ')}, or pass a SearchProvider object.`,
    );
  }
  const { variable, label } = PROVIDER_ENV[config.provider];
  const fromEnv = (env[variable] ?? '').trim();
  if (config.provider === 'searxng') {
    const baseUrl = config.baseUrl ?? fromEnv;
    if (baseUrl === '') {
      throw new ConfigurationError(
        `The searxng search provider needs a ${label}: set ${variable} (e.g. http://localhost:8080) or pass { provider: 'searxng', baseUrl }.`,
      );
    }
    let parsed: URL | undefined;
    try {
      parsed = new URL(baseUrl);
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      throw new ConfigurationError(
        `The SearXNG URL "${baseUrl}" (${variable}) is not an absolute http(s) URL. Set it to the instance address, e.g. http://localhost:8080.`,
      );
    }
    return createSearxngProvider({ baseUrl });
  }
  const apiKey = config.apiKey ?? fromEnv;
  if (apiKey === '') {
    throw new ConfigurationError(
      `The ${config.provider} search provider needs a ${label}: set the ${variable} environment variable or pass { provider: '${config.provider}', apiKey }.`,
    );
  }
  const options = { apiKey, ...(config.baseUrl !== undefined ? { baseUrl: config.baseUrl } : {}) };
  switch (config.provider) {
    case 'brave':
      return createBraveProvider(options);
    case 'tavily':
      return createTavilyProvider(options);
    case 'serper':
      return createSerperProvider(options);
    case 'bing':
      return createBingProvider(options);
  }
}
