// The published CLI is one bundle: its packages are devDependencies, and the built files import
// nothing but Node's own modules and each other (an install downloads the bundle alone).
import { readdir, readFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { appDir, assertBuilt } from './testing/test-support.js';

beforeAll(() => assertBuilt());

describe('the bundle', () => {
  it('has no runtime dependencies: what the CLI uses is bundled (add libraries as devDependencies)', async () => {
    const manifest = JSON.parse(await readFile(join(appDir, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
    };
    expect(manifest.dependencies ?? {}).toEqual({});
  });

  it('imports only Node built-ins and its own chunks', async () => {
    const dist = join(appDir, 'dist');
    const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));
    const outside: string[] = [];
    for (const file of (await readdir(dist)).filter((name) => name.endsWith('.js'))) {
      const code = await readFile(join(dist, file), 'utf8');
      // Static imports start a statement of esbuild's output; dynamic ones are import("…") calls.
      const statics = code.matchAll(/(?:^|;)import\s*(?:[^"';]*?from\s*)?["']([^"']+)["']/gm);
      const dynamics = code.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g);
      for (const match of [...statics, ...dynamics]) {
        const specifier = match[1] ?? '';
        if (specifier.startsWith('./') || builtins.has(specifier)) continue;
        outside.push(`${file}: ${specifier}`);
      }
    }
    expect(outside).toEqual([]);
  });

  it("ships the search tool's worker next to its chunks, loadable on its own", async () => {
    const file = join(appDir, 'dist', 'search-worker.js');
    const module = (await import(pathToFileURL(file).href)) as { searchWorkerMarker?: string };
    expect(module.searchWorkerMarker).toBe('@agent/tools-builtin search worker');
  });

  it("ships web_fetch's HTML worker next to its chunks: a large page is taken apart there", async () => {
    const file = join(appDir, 'dist', 'html-worker.js');
    const module = (await import(pathToFileURL(file).href)) as { htmlWorkerMarker?: string };
    expect(module.htmlWorkerMarker).toBe('agent-tools-web-html-worker');
  });
});
