import { existsSync, readdirSync, readFileSync } from 'node:fs';
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

/** Each service: its directory and the workspace link its package name resolves through. */
const SERVICES = readdirSync(new URL('./services/', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map(({ name }) => {
    const { name: packageName } = JSON.parse(readFileSync(new URL(`./services/${name}/package.json`, import.meta.url), 'utf8'));
    return { name, paths: [`./services/${name}`, `./node_modules/${packageName}`] };
  });

// Dependencies point down (DESIGN.md, "Where things live"): services compose packages; nothing
// imports a service. Checked on static, type-only and dynamic import() alike, on the resolved path:
// a bare @gatehouse/x resolves to node_modules/@gatehouse/x/dist/… without following the workspace
// link, hence both paths per service, and only once dist/ is built (unresolved imports are skipped).
// Package tests still import the reference tools, and test/ and bench/ are harnesses that start
// services in-process, so they are not targets yet.
/** The domains: every example package (the reference pack included), by directory and by workspace link. */
const EXAMPLES = readdirSync(new URL('./examples/', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .flatMap(({ name }) =>
    readdirSync(new URL(`./examples/${name}/`, import.meta.url), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => `${name}/${e.name}`),
  )
  .filter((dir) => existsSync(new URL(`./examples/${dir}/package.json`, import.meta.url)))
  .map((dir) => JSON.parse(readFileSync(new URL(`./examples/${dir}/package.json`, import.meta.url), 'utf8')).name);
const DOMAINS = ['./examples', ...EXAMPLES.map((name) => `./node_modules/${name}`)];

const LAYERING_ZONES = [
  {
    target: ['./packages/*/src/**', './services/*/src/**'],
    from: DOMAINS,
    message: 'Core code never imports a domain: a service hosts the tool pack GATEHOUSE_TOOL_PACK names.',
  },
  {
    target: './packages/*/src/**',
    from: SERVICES.flatMap((service) => service.paths),
    message: 'A package never imports a service: move what both need into a package (e.g. @gatehouse/governance).',
  },
  ...SERVICES.filter(() => SERVICES.length > 1).map((service) => ({
    target: `./services/${service.name}`,
    from: SERVICES.filter((other) => other !== service).flatMap((other) => other.paths),
    message: 'A service never imports another service: share through a package.',
  })),
];

export default tseslint.config(
  {
    ignores: ['**/dist/**', '**/node_modules/**', '.stack/**', 'test-artifacts/**', 'eslint.config.js'],
  },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        project: [
          './tsconfig.tests.json',
          './packages/*/tsconfig.json',
          './services/*/tsconfig.json',
          './examples/*/*/tsconfig.json',
          './bench/tsconfig.json',
        ],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    plugins: { 'import-x': importX },
    // Resolves `./x.js` to the `x.ts` beside it, as TypeScript does: without it, no import of the
    // project's own sources resolves and import-x's rules see nothing of them.
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ alwaysTryTypes: true })],
      // How import-x reads an imported module to follow its own imports (for no-cycle).
      'import-x/extensions': ['.ts', '.js', '.mjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      // Cycles among the project's own modules; packages from the registry are not followed.
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-default-export': 'error',
    },
  },
  {
    files: ['packages/**/*.ts', 'services/**/*.ts'],
    rules: {
      'import-x/no-restricted-paths': ['error', { basePath: import.meta.dirname, zones: LAYERING_ZONES }],
    },
  },
  {
    // A function fits on a screen (STYLE.md, "Habits"): past that, split it by step.
    files: ['packages/*/src/**/*.ts', 'services/*/src/**/*.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
  {
    // The approval console: plain browser JavaScript, no build step, outside every tsconfig.
    files: ['services/*/console/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: 'script',
      globals: Object.fromEntries(
        [
          'document',
          'window',
          'history',
          'sessionStorage',
          'fetch',
          'setInterval',
          'console',
          'Intl',
          'Node',
          'CSS',
          'HTMLInputElement',
          'HTMLTextAreaElement',
        ].map((g) => [g, 'readonly']),
      ),
    },
    rules: { ...tseslint.configs.disableTypeChecked.rules, 'no-undef': 'error', 'import-x/no-default-export': 'off' },
  },
  {
    // Plain Node ESM outside every tsconfig: launchers of compiled commands (packages/cli/bin) and
    // packs written in JavaScript that tests load by path, and the protocol model's history replay.
    files: ['packages/*/bin/*.mjs', 'packages/*/model/**/*.mjs', 'services/*/bin/*.mjs', 'packages/*/test/fixtures/**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: { process: 'readonly', URL: 'readonly' },
    },
    rules: { ...tseslint.configs.disableTypeChecked.rules, 'no-undef': 'error' },
  },
  {
    // The repository's own Node scripts (demo, start, test runner, stack): plain ESM, run directly,
    // so a name they do not define is caught here rather than when a demo runs.
    files: ['scripts/**/*.mjs', 'deploy/**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: Object.fromEntries(
        [
          'process',
          'console',
          'Buffer',
          'URL',
          'fetch',
          'setTimeout',
          'clearTimeout',
          'setInterval',
          'clearInterval',
          'AbortController',
          'AbortSignal',
          'performance',
        ].map((name) => [name, 'readonly']),
      ),
    },
    rules: { ...tseslint.configs.disableTypeChecked.rules, 'no-undef': 'error' },
  },
  {
    files: ['vitest.config.ts', 'eslint.config.js'],
    rules: { 'import-x/no-default-export': 'off' },
  },
);
