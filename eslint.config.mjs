// Lint rules that guard the Temporal boundaries (STYLE.md, convention 2):
// workflow code must stay deterministic and must not pull in activities, the gateway or Node.
// The import patterns match a folder name anywhere in the specifier, so they hold at any depth
// (workflows/steps/x.ts importing ../../activities is caught just like workflows/x.ts importing ../activities).
// test/lint.test.ts proves it on fixtures.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

/**
 * A regular expression over the import specifier: activities/, temporal/, test/ and everything
 * under src/ except src/common/ (the pure helpers workflows import by value).
 */
const workflowForbiddenValueImports = '(^|/)(activities|temporal|test)(/|$)|(^|/)src(/(?!common(/|$))|$)';

const workflowImportRule = ['error', {
  paths: nodeBuiltins.map((name) => ({ name, message: 'Workflow code is deterministic: no Node built-ins.' })),
  patterns: [
    { regex: workflowForbiddenValueImports,
      allowTypeImports: true,
      message: 'Workflows import activities, the gateway, the registry, the tool gateway or Temporal wiring as types only; values only from src/common/.' },
    { group: ['@temporalio/activity', '@temporalio/client', '@temporalio/worker', '@temporalio/testing'],
      message: 'Workflows import only @temporalio/workflow.' },
  ],
}];

const activityImportRule = ['error', {
  patterns: [{ regex: '(^|/)(workflows|src/http)(/|$)',
    message: 'Activities never import workflows or the HTTP layer.' }],
}];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Type-aware rules: a promise nobody awaits loses its rejection (an unhandled rejection, or a
    // step reported done before it is). The project service reads tsconfig.json.
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // a name used only as a type is imported with `import type`, so the emitted JS drops the import
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': workflowImportRule,
      'no-restricted-globals': ['error',
        { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' },
        { name: 'setInterval', message: 'Use sleep() loops from @temporalio/workflow.' },
        { name: 'process', message: 'Workflows never read the environment.' }],
      // Every module of workflows/ is loaded once and shared by all cached runs (temporal/worker.ts
      // sharedWorkflowModules): a module-level variable would be one for every run.
      'no-restricted-syntax': ['error', {
        selector: 'Program > VariableDeclaration[kind!="const"], Program > ExportNamedDeclaration > VariableDeclaration[kind!="const"]',
        message: 'Modules of workflows/ are shared by every run: keep run state in the workflow function or in runLocals() (workflows/run/run-locals.ts).',
      }],
    },
  },
  {
    // only in the bundle of a worker that traces, and never shared: evaluated again for each run
    files: ['workflows/run/tracing-interceptors.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    files: ['activities/**/*.ts'],
    rules: { 'no-restricted-imports': activityImportRule },
  },
  {
    // the dependency-cruiser configuration is CommonJS, as that tool reads it
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable' } },
  },
  {
    files: ['src/main.ts', 'src/cli/main.ts', 'temporal/cli-main.ts', 'temporal/run-cli.ts', 'test/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);
