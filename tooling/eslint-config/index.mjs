import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** The house ESLint flat config: recommended JS + typescript-eslint rules, Prettier owns formatting. */
export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/coverage/**', '**/bench/results/**', '**/test/fixtures/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      'no-restricted-syntax': [
        'error',
        { selector: 'ThrowStatement > Literal', message: 'Throw an Error subclass, never a string.' },
      ],
      eqeqeq: ['error', 'smart'],
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/packages/*/src/**', '../../*/src/**', '@quiver/*/src/**', '@quiver/*/dist/**'],
              message: 'Import a sibling package by its name (and declare it in package.json), never from its src/ or dist/.',
            },
          ],
        },
      ],
    },
  },
  {
    // Browser code served as it is (the demo server's web UI).
    files: ['**/web/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['**/test/**', '**/bench/**'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off', '@typescript-eslint/no-explicit-any': 'off' },
  },
  prettier,
);
