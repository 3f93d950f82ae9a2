// ESLint (flat config), in CI as `npm run lint`: typescript-eslint's recommended-type-checked rules
// over all hand-written TypeScript. Formatting is prettier's (`npm run format:check`), not ESLint's.
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'generated/**', '.tmp/**', 'test/consumers/clients/**', '**/*.cjs', '**/*.mjs'] },
  eslint.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // A leading underscore names a parameter or element that is deliberately not used.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // Implementations of an async interface (providers, handlers) stay async even when one of
      // them has nothing to await: the interface is the contract, not the body.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Tests and scripts read JSON answers and reports whose shape the contract client has already
    // checked against the spec (or that are external tools' output): member access on those values
    // is what they are for. Service code (domain, db, platform, services, handlers, server) keeps every rule.
    files: ['test/**/*.ts', 'scripts/**/*.ts', 'vitest.config.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
);
