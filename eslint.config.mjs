// ESLint over the TypeScript of every part (gateway, subgraphs, common, bin, scripts, test, bench and
// the admin app), with typescript-eslint's type-aware recommended rules. Formatting is Prettier's job.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'dist/',
      'data/',
      'coverage/',
      'test-artifacts/',
      'subgraphs/*/db/generated/',
      'clients/typescript/src/gql/',
      'clients/typescript/src/rest/openapi.d.ts',
    ],
  },
  {
    files: ['**/*.ts', '**/*.mts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        // One program per tsconfig: the root one (server, tests, the client package), the bench one, the browser apps' own (DOM, bundler), the client package's with its tests.
        project: [
          './tsconfig.json',
          './tsconfig.bench.json',
          './gateway/admin/tsconfig.json',
          './gateway/explorer/tsconfig.json',
          './clients/typescript/example/tsconfig.json',
          './clients/typescript/tsconfig.eslint.json',
        ],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // `_`-prefixed names mark parameters a signature needs but the body does not use.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      // String(x) of an `unknown` is how error messages and the dashboard show a value of unchecked type.
      '@typescript-eslint/no-base-to-string': 'off',
      // `any` sits at the edges (JSON bodies, Prisma JSON columns, GraphQL args, third-party hooks) where zod or
      // type-graphql validate the value; the no-unsafe-* family would flag every read of those values again.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      // `async` without `await` implements promise-returning interfaces and turns a throw into a rejection on purpose.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: ['gateway/admin/src/**/*.ts', 'gateway/explorer/src/**/*.ts', 'clients/typescript/example/**/*.ts'],
    rules: {
      // DOM handlers given to h() may be async: each catches and shows its own errors (busy/act, the forms' try/catch).
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { properties: false } }],
    },
  },
);
