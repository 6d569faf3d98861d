// ESLint flat config: @eslint/js's recommended rules for correctness, and @stylistic rules
// written to match the code as it is (2-space indent, single quotes, semicolons, trailing
// commas on multi-line lists, `{ a }` but `[a]`), so `npm run format` (eslint --fix) only
// touches lines that stray from it. No line-length rule: the JavaScript has none (C's
// .clang-format has 112).
import js from '@eslint/js';
import stylistic from '@stylistic/eslint-plugin';
import globals from 'globals';

const style = {
  '@stylistic/indent': ['error', 2],
  '@stylistic/quotes': ['error', 'single', { avoidEscape: true, allowTemplateLiterals: 'always' }],
  '@stylistic/semi': ['error', 'always'],
  '@stylistic/semi-spacing': 'error',
  '@stylistic/semi-style': 'error',
  '@stylistic/no-extra-semi': 'error',
  '@stylistic/comma-dangle': ['error', 'always-multiline'],
  '@stylistic/comma-spacing': 'error',
  '@stylistic/comma-style': 'error',
  '@stylistic/object-curly-spacing': ['error', 'always'],
  '@stylistic/object-curly-newline': ['error', { consistent: true }],
  '@stylistic/array-bracket-spacing': ['error', 'never'],
  '@stylistic/array-bracket-newline': ['error', 'consistent'],
  '@stylistic/computed-property-spacing': 'error',
  '@stylistic/key-spacing': 'error',
  '@stylistic/quote-props': ['error', 'as-needed'],
  '@stylistic/arrow-parens': ['error', 'always'],
  '@stylistic/arrow-spacing': 'error',
  '@stylistic/brace-style': ['error', '1tbs', { allowSingleLine: true }],
  '@stylistic/block-spacing': 'error',
  '@stylistic/padded-blocks': ['error', 'never'],
  '@stylistic/keyword-spacing': 'error',
  '@stylistic/space-before-blocks': 'error',
  '@stylistic/space-before-function-paren': ['error', { anonymous: 'always', named: 'never', asyncArrow: 'always' }],
  '@stylistic/space-in-parens': 'error',
  '@stylistic/space-infix-ops': 'error',
  '@stylistic/space-unary-ops': 'error',
  '@stylistic/function-call-spacing': 'error',
  '@stylistic/generator-star-spacing': ['error', { before: false, after: true, method: { before: true, after: false } }],
  '@stylistic/yield-star-spacing': ['error', 'after'],
  '@stylistic/rest-spread-spacing': 'error',
  '@stylistic/template-curly-spacing': 'error',
  '@stylistic/template-tag-spacing': 'error',
  '@stylistic/switch-colon-spacing': 'error',
  '@stylistic/dot-location': ['error', 'property'],
  '@stylistic/no-whitespace-before-property': 'error',
  '@stylistic/no-multi-spaces': 'error',
  // Binary operators end the line; a conditional's `?` and `:` begin it.
  '@stylistic/operator-linebreak': ['error', 'after', { overrides: { '?': 'before', ':': 'before' } }],
  '@stylistic/new-parens': 'error',
  '@stylistic/no-floating-decimal': 'error',
  '@stylistic/wrap-iife': ['error', 'inside'],
  '@stylistic/lines-between-class-members': ['error', 'always', { exceptAfterSingleLine: true }],
  '@stylistic/spaced-comment': ['error', 'always', { block: { balanced: true } }],
  '@stylistic/no-multiple-empty-lines': ['error', { max: 1, maxBOF: 0, maxEOF: 0 }],
  '@stylistic/no-trailing-spaces': 'error',
  '@stylistic/eol-last': 'error',
  '@stylistic/linebreak-style': ['error', 'unix'],
  '@stylistic/no-tabs': 'error',
  '@stylistic/no-mixed-spaces-and-tabs': 'error',
};

export default [
  {
    ignores: [
      '**/node_modules/**',
      'build/**',
      // Generated (committed; CI checks they are fresh): the inlined module and the one-file bundles.
      'js/inline-module.js',
      'js/bundle.mjs',
      'js/lite.mjs',
      // Written by examples/*/build steps.
      'examples/extension/vendor/**',
      'examples/extension/filters/**',
      'examples/vite/dist/**',
    ],
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...js.configs.recommended,
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    languageOptions: {
      ecmaVersion: 'latest',
      sourceType: 'module',
      // The library runs in Node and in browsers alike; platform code checks for what it uses.
      globals: { ...globals.node, ...globals.browser },
    },
    plugins: { '@stylistic': stylistic },
    rules: {
      ...style,
      // `catch {}` and deliberately empty blocks carry a comment; unused caught errors are fine.
      'no-unused-vars': ['error', { caughtErrors: 'none', ignoreRestSiblings: true }],
      'no-new-func': 'error',
      'no-eval': 'error',
      'no-implied-eval': 'error',
    },
  },
  {
    // The extension's scripts run in its service worker and pages; the browser tests pass
    // callbacks that run there too (page.evaluate).
    files: ['examples/extension/**/*.js', 'tests/browser/**/*.mjs'],
    languageOptions: { globals: { ...globals.serviceworker, ...globals.webextensions } },
  },
];
