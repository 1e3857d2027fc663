import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'coverage/', 'dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  {
    // The dashboard runs in browsers: their globals, and TSX (typescript-eslint's rules apply to .tsx).
    files: ['web/**/*.{ts,tsx}'],
    languageOptions: {
      parserOptions: { ecmaFeatures: { jsx: true } },
      globals: Object.fromEntries(
        [
          'window', 'document', 'location', 'history', 'navigator', 'fetch', 'URL', 'URLSearchParams', 'Intl',
          'console', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'requestAnimationFrame',
          'cancelAnimationFrame', 'localStorage', 'sessionStorage', 'matchMedia', 'getComputedStyle',
          'ResizeObserver', 'IntersectionObserver', 'MutationObserver', 'AbortController', 'Blob', 'FormData',
          'Headers', 'Request', 'Response', 'Event', 'CustomEvent', 'PopStateEvent', 'KeyboardEvent', 'MouseEvent',
          'FocusEvent', 'InputEvent', 'SubmitEvent', 'Element', 'HTMLElement', 'HTMLInputElement',
          'HTMLSelectElement', 'HTMLTextAreaElement', 'HTMLButtonElement', 'HTMLAnchorElement', 'HTMLDialogElement',
          'HTMLCanvasElement', 'HTMLDivElement', 'SVGElement', 'Node', 'DOMRect', 'queueMicrotask',
        ].map((name) => [name, 'readonly']),
      ),
    },
  },
  {
    // Tests read arbitrary JSON responses.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
