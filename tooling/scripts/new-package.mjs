#!/usr/bin/env node
// Scaffold a new publishable package: `node tooling/scripts/new-package.mjs <name> "<description>"`.
// Writes packages/<name>/ with package.json, tsconfig, tsdown, jest and eslint configs,
// src/index.ts, a first test, a README and a changeset, following CONVENTIONS.md.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [name, description = ''] = process.argv.slice(2);
if (!name || !/^[a-z][a-z0-9-]*$/.test(name)) {
  console.error('usage: node tooling/scripts/new-package.mjs <kebab-case-name> "<description>"');
  process.exit(2);
}
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = join(root, 'packages', name);
if (existsSync(dir)) {
  console.error(`packages/${name} already exists`);
  process.exit(1);
}
const fullName = `@quiver/${name}`;
const write = (path, text) => {
  mkdirSync(dirname(join(dir, path)), { recursive: true });
  writeFileSync(join(dir, path), text);
};
write(
  'package.json',
  JSON.stringify(
    {
      name: fullName,
      version: '0.0.0',
      description,
      license: 'MIT',
      type: 'module',
      sideEffects: false,
      engines: { node: '>=20' },
      files: ['dist', 'src'],
      exports: {
        './package.json': './package.json',
        '.': {
          import: { types: './dist/index.d.mts', default: './dist/index.mjs' },
          require: { types: './dist/index.d.cts', default: './dist/index.cjs' },
        },
      },
      main: './dist/index.cjs',
      module: './dist/index.mjs',
      types: './dist/index.d.cts',
      scripts: {
        build: 'tsdown',
        typecheck: 'tsc --noEmit -p tsconfig.json',
        lint: 'eslint . && prettier --check --no-error-on-unmatched-pattern --ignore-path ../../.prettierignore src test bench',
        test: 'jest',
      },
      dependencies: { '@quiver/core': 'workspace:^' },
      devDependencies: {
        '@jest/globals': '30.5.2',
        '@quiver/build-config': 'workspace:*',
        '@quiver/eslint-config': 'workspace:*',
        '@quiver/jest-config': 'workspace:*',
        '@types/node': '^20.19.0',
        eslint: '9.39.5',
        jest: '30.5.2',
        tsdown: '0.21.8',
        typescript: '5.9.3',
      },
      publishConfig: { access: 'public' },
    },
    null,
    2,
  ) + '\n',
);
write('tsconfig.json', '{\n  "extends": "../../tooling/tsconfig/library.json",\n  "include": ["src", "test", "bench"]\n}\n');
write('tsdown.config.ts', "import { libraryBuild } from '@quiver/build-config';\n\nexport default libraryBuild();\n");
write(
  'jest.config.mjs',
  `import { createJestConfig } from '@quiver/jest-config';\n\nexport default createJestConfig({ displayName: '${fullName}' });\n`,
);
write('eslint.config.mjs', "export { default } from '@quiver/eslint-config';\n");
write('src/index.ts', `export const packageName = '${fullName}';\n`);
write(
  'test/index.test.ts',
  `import { describe, expect, it } from '@jest/globals';\nimport { packageName } from '../src/index.js';\n\ndescribe('${fullName}', () => {\n  it('has a name', () => {\n    expect(packageName).toBe('${fullName}');\n  });\n});\n`,
);
write('README.md', `# ${fullName}\n\n${description}\n\n## Install\n\n\`\`\`sh\nnpm install ${fullName}\n\`\`\`\n`);
writeFileSync(join(root, '.changeset', `new-${name}.md`), `---\n'${fullName}': minor\n---\n\nFirst release of ${fullName}.\n`);
console.log(`created packages/${name}; now run: pnpm install`);
