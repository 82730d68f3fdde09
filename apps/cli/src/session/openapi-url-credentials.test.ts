// `--openapi https://…/spec.json?api_key=…`: many APIs serve their document behind the same key
// as their operations. The key must not reach the terminal — not in a warning about the
// document, not in the error when it cannot be fetched.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

const key = 'k-live-9f8e7d6c5b4a3210';
// An operation whose path parameter is not declared: the adapter warns about it.
const document = {
  openapi: '3.0.3',
  info: { title: 'Pets', version: '1' },
  servers: [{ url: 'http://127.0.0.1:1' }],
  paths: {
    '/pets/{id}': { get: { operationId: 'getPet', responses: { '200': { description: 'ok' } } } },
  },
};
const server = createServer((request, response) => {
  if (request.url?.startsWith('/spec.json'))
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(document));
  else response.writeHead(404).end();
});
let base = '';
beforeAll(async () => {
  assertBuilt();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function run(spec: string) {
  const dir = await tempDir('agent-cli-openapi-url-');
  try {
    const script = await writeScript(dir.path, [{ text: 'done' }]);
    return await runCli(['-p', 'go', '--scripted', script, '--cwd', dir.path, '--openapi', spec], {
      env: cleanEnv(),
    });
  } finally {
    await dir.dispose();
  }
}

describe('--openapi with a key in the document URL', () => {
  it('a warning about the document names it without the key', async () => {
    const result = await run(`${base}/spec.json?api_key=${key}&v=2`);
    expect(result.stderr).toContain(`openapi ${base}/spec.json?api_key=***&v=2: `);
    expect(result.stderr).toContain('path parameter "id" is not declared');
    expect(`${result.stdout}${result.stderr}`).not.toContain(key);
  });

  it('a document that cannot be fetched is named without the key', async () => {
    const result = await run(`${base}/gone.json?token=${key}`);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`${base}/gone.json?token=***: HTTP 404`);
    expect(`${result.stdout}${result.stderr}`).not.toContain(key);
  });
});
