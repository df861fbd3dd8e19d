// Lint rules that guard the Temporal boundaries (STYLE.md, convention 2):
// workflow code must stay deterministic and must not pull in activities, the gateway or Node.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: nodeBuiltins.map((name) => ({ name, message: 'Workflow code is deterministic: no Node built-ins.' })),
        patterns: [
          { group: ['../activities', '../activities/*', '../src/gateway/*', '../src/registry/*', '../temporal/*'],
            allowTypeImports: true,
            message: 'Workflows may import activities, the gateway, the registry or Temporal wiring as types only.' },
          { group: ['@temporalio/activity', '@temporalio/client', '@temporalio/worker', '@temporalio/testing'],
            message: 'Workflows import only @temporalio/workflow.' },
        ],
      }],
      'no-restricted-globals': ['error',
        { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' },
        { name: 'setInterval', message: 'Use sleep() loops from @temporalio/workflow.' },
        { name: 'process', message: 'Workflows never read the environment.' }],
    },
  },
  {
    files: ['activities/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{ group: ['../workflows', '../workflows/*', '../src/gateway/*'],
          message: 'Activities never import workflows or the HTTP layer.' }],
      }],
    },
  },
  {
    files: ['src/main.ts', 'src/cli.ts', 'temporal/cli-main.ts', 'temporal/run-cli.ts', 'test/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);
