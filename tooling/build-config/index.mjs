import { defineConfig } from 'tsdown';

/**
 * The library build every package uses: ESM (`.mjs`) and CommonJS (`.cjs`) with declarations
 * for both (`.d.mts`, `.d.cts`), for Node 20. CommonJS matters: jest and older tooling load it.
 *
 * @param {{ entry?: string[] | Record<string, string> } & import('tsdown').UserConfig} [options]
 */
export function libraryBuild(options = {}) {
  const { entry = ['src/index.ts'], ...rest } = options;
  return defineConfig({
    entry,
    format: ['esm', 'cjs'],
    dts: true,
    fixedExtension: true,
    sourcemap: true,
    clean: true,
    platform: 'node',
    target: 'node20',
    shims: true,
    // Bundle nothing from node_modules: a dependency must be declared in package.json (and so
    // stay external), or the build fails instead of shipping a hidden copy.
    deps: { onlyBundle: [] },
    ...rest,
  });
}
