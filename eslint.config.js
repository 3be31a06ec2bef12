import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';

export default tseslint.config(
  {
    ignores: ['**/dist/**', '**/node_modules/**', '.stack/**', 'test-artifacts/**', 'deploy/**/*.mjs', 'scripts/**', 'eslint.config.js'],
  },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        project: ['./tsconfig.tests.json', './packages/*/tsconfig.json', './services/*/tsconfig.json', './bench/tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    plugins: { 'import-x': importX },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      'import-x/no-cycle': 'error',
      'import-x/no-default-export': 'error',
    },
  },
  {
    // The approval console: plain browser JavaScript, no build step, outside every tsconfig.
    files: ['services/*/console/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: 'script',
      globals: Object.fromEntries(['document', 'sessionStorage', 'fetch', 'setInterval', 'console', 'Intl', 'Node', 'CSS', 'HTMLInputElement', 'HTMLTextAreaElement'].map((g) => [g, 'readonly'])),
    },
    rules: { ...tseslint.configs.disableTypeChecked.rules, 'no-undef': 'error', 'import-x/no-default-export': 'off' },
  },
  {
    files: ['vitest.config.ts', 'eslint.config.js'],
    rules: { 'import-x/no-default-export': 'off' },
  },
);
