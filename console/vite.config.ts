import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

/** The console's build: sources in console/, hashed assets in dist/console/ served by the gateway at /console/. */
export default defineConfig({
  root: here,
  base: '/console/',
  // The gateway serves the build; nothing is fetched at run time, and no inline script is emitted (CSP default-src 'self').
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    // Every asset a file with a hashed name (cached for a year): a data: URL would break CSP's default-src 'self',
    // and the favicon under its own name was asked again, revalidated, at each change of page.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: true,
  },
  logLevel: 'warn',
});
