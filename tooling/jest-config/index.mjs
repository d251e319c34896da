import { fileURLToPath } from 'node:url';

const resultsReporter = fileURLToPath(new URL('./results-reporter.cjs', import.meta.url));

/**
 * Shared jest configuration: ts-jest compiles TypeScript to CommonJS for jest (jest loads
 * modules as CommonJS), type-checking is left to `tsc --noEmit` (run by `pnpm typecheck`), so
 * tests start fast and subpath exports resolve the same way they do at run time.
 *
 * @param {{ displayName: string, testTimeout?: number, integration?: boolean } & Record<string, unknown>} options
 * @returns {import('jest').Config}
 */
export function createJestConfig(options) {
  const { displayName, testTimeout = 30_000, moduleNameMapper = {}, ...rest } = options;
  return {
    displayName,
    testEnvironment: 'node',
    roots: ['<rootDir>/test'],
    testMatch: ['**/*.test.ts'],
    testTimeout,
    transform: {
      '^.+\\.tsx?$': [
        'ts-jest',
        {
          tsconfig: {
            module: 'commonjs',
            moduleResolution: 'node10',
            target: 'ES2022',
            isolatedModules: true,
            esModuleInterop: true,
            sourceMap: true,
          },
          diagnostics: false,
        },
      ],
    },
    // Sources use NodeNext-style relative imports ending in `.js`; map them back to the `.ts` file.
    moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1', ...moduleNameMapper },
    reporters: ['default', resultsReporter],
    ...rest,
  };
}
