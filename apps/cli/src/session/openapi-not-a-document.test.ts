// `--openapi` given the documentation page instead of the document (`--openapi
// https://docs.example.com/api`): the real CLI fetches a real HTML page from 127.0.0.1. Before, it
// said "the document must be an object, found a string" and quoted the page; now it says it is a
// web page and what to give instead, exit 1, before any run. And a document with no operations
// added no tools without a word: now a line says so, and the session goes on.

import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('--openapi naming a web page', () => {
  it('is said as such, with what to give instead', async () => {
    const server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(
        '<!DOCTYPE html>\n<html><body><h1>Pets API</h1><p>secret-looking words</p></body></html>',
      );
    });
    server.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/docs`;
    const dir = await tempDir('agent-openapi-page-');
    cleanups.push(dir.dispose);
    const script = await writeScript(dir.path, [{ text: 'answered' }]);
    const run = await runCli(
      ['--scripted', script, '--cwd', dir.path, '--openapi', url, '-p', 'hi'],
      {
        env: cleanEnv({ AGENT_HOME: join(dir.path, 'home') }),
      },
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'it is an HTML or XML page, not an OpenAPI document (JSON or YAML); for a documentation site, give the address of its openapi.json or openapi.yaml',
    );
    expect(run.stderr).not.toContain('secret-looking words');
    expect(run.stdout).toBe('');
  }, 60_000);

  it('a document with no operations: said, the session goes on', async () => {
    const dir = await tempDir('agent-openapi-empty-');
    cleanups.push(dir.dispose);
    const spec = join(dir.path, 'api.json');
    await writeFile(
      spec,
      JSON.stringify({ openapi: '3.0.0', info: { title: 'x', version: '1' }, paths: {} }),
    );
    const script = await writeScript(dir.path, [{ text: 'answered' }]);
    const run = await runCli(
      ['--scripted', script, '--cwd', dir.path, '--openapi', spec, '-p', 'hi'],
      {
        env: cleanEnv({ AGENT_HOME: join(dir.path, 'home') }),
      },
    );
    expect(run.stderr).toContain(
      `openapi ${spec}: the document has no operations under "paths", so it adds no tools`,
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('answered\n');
  }, 60_000);
});
