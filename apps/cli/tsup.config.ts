import { copyFileSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { defineConfig } from 'tsup';

/** `agent <version>` and `@agent/<pkg> <version>` for every bundled `@agent/*` package. */
function versions(): string {
  const read = (path: string) =>
    JSON.parse(readFileSync(path, 'utf8')) as {
      version: string;
      devDependencies?: Record<string, string>;
    };
  const own = read('package.json');
  const lines = [`agent ${own.version}`];
  // Not the workspace's test-only tooling (@agent/tooling-*): it is never bundled.
  for (const name of Object.keys(own.devDependencies ?? {}).filter(
    (dep) => dep.startsWith('@agent/') && !dep.startsWith('@agent/tooling-'),
  ))
    lines.push(`${name} ${read(`node_modules/${name}/package.json`).version}`);
  return `${lines.join('\n')}\n`;
}

/**
 * Code mode's QuickJS WebAssembly file, copied next to the chunks: the bundle holds QuickJS's glue
 * code but not the `.wasm`, which `@agent/code-mode` reads from next to itself first.
 */
function copyQuickJsWasm(): void {
  const codeMode = createRequire(import.meta.url).resolve('@agent/code-mode/package.json');
  const wasm = createRequire(codeMode).resolve('@jitl/quickjs-wasmfile-release-sync/wasm');
  copyFileSync(wasm, 'dist/emscripten-module.wasm');
}

export default defineConfig({
  // dist/main.js is the executable (src/entry.ts: --version and the compile cache); the CLI proper
  // (src/main.ts) and everything else are chunks it imports.
  // dist/search-worker.js: the search tool's worker (tools-builtin starts it from the file next to
  // the chunk that holds its engine); without it big searches fall back to one thread.
  entry: {
    main: 'src/entry.ts',
    'search-worker': 'node_modules/@agent/tools-builtin/dist/search-worker.js',
    // dist/html-worker.js: web_fetch takes large pages apart there (tools-web starts it from the
    // file next to its chunk); without it they are converted on the main thread.
    'html-worker': 'node_modules/@agent/tools-web/dist/html-worker.js',
    // dist/script-worker.js: code mode runs each script in it (code-mode starts it from the file
    // next to its chunk); without it run_script fails closed, it never runs on the main thread.
    'script-worker': 'node_modules/@agent/code-mode/dist/script-worker.js',
  },
  format: ['esm'],
  clean: true,
  target: 'es2023',
  platform: 'node',
  splitting: true,
  // Start-up time: everything the CLI runs on is bundled (the packages are devDependencies, so an
  // install downloads the bundle alone), so a start reads a few files instead of hundreds; what
  // only some paths need (each provider's SDK, MCP, OpenAPI) stays in chunks loaded when used.
  noExternal: [/.*/],
  // Less to read and parse at each start; names are kept, so a stack trace stays readable (and
  // no source maps: ~18 MB of maps would be published for that bundle).
  minifyWhitespace: true,
  minifySyntax: true,
  define: { __AGENT_VERSIONS__: JSON.stringify(versions()) },
  onSuccess: async () => copyQuickJsWasm(),
  banner: {
    // Bundled CommonJS dependencies call require() for Node's built-ins.
    js: "#!/usr/bin/env node\nimport { createRequire as __cliCreateRequire } from 'node:module';\nconst require = __cliCreateRequire(import.meta.url);",
  },
});
