import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';

export default tseslint.config(
  { ignores: ['node_modules', 'dist', '.stack', 'stack/**/target', 'coverage'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { 'import-x': importX },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'import-x/no-cycle': 'error',
      'no-console': 'error',
    },
  },
  {
    // The CLI, the stack tool, scripts and benchmarks talk to a terminal.
    files: ['app/cli/**', 'stack/**', 'scripts/**', 'bench/**', 'test/**'],
    rules: { 'no-console': 'off' },
  },
  {
    // Temporal's deterministic sandbox: only the workflow API, pure modules and types from activities.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*'], message: 'workflows run in the deterministic sandbox: no Node built-ins' },
            {
              group: ['../activities/*', '../../activities/*'],
              allowTypeImports: true,
              message: 'workflows import only types from activities',
            },
          ],
        },
      ],
    },
  },
  {
    // The consoles run in a browser and reach the product through the HTTP API only.
    files: ['console/**/*.ts', 'console/**/*.tsx'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*'], message: 'the consoles run in a browser: no Node built-ins' },
            { group: ['**/app/api/*', '**/app/*', '**/substrate/*', '**/temporal/*'], message: 'use the HTTP API' },
          ],
        },
      ],
    },
  },
  {
    // The build configuration runs in Node.
    files: ['console/vite.config.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { globals: { module: 'writable', require: 'readonly', process: 'readonly', console: 'readonly' } },
  },
);
