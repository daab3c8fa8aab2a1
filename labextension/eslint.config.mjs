// ESLint's flat config: typescript-eslint's type-aware rules on the sources (tsconfig.json),
// its syntactic rules on the tests (vitest, outside the build's tsconfig); layout is prettier's.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['lib/', 'node_modules/', '.yarn/', '../ludwig_nb/labextension/'] },
  js.configs.recommended,
  {
    files: ['src/**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname }
    }
  },
  {
    files: ['test/**/*.ts', '*.mts'],
    extends: [tseslint.configs.recommended]
  },
  {
    files: ['**/*.ts', '**/*.mts'],
    rules: {
      eqeqeq: ['error', 'smart'],
      curly: ['error', 'multi-line'],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }]
    }
  },
  prettier
);
