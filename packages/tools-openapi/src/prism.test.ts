import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenApiToolAdapter } from './openapi-tool-adapter.js';
import { callTool, resultJson, resultText } from './test-helpers.js';

// Stoplight Prism: a third-party mock server that validates every request against the document.
// It runs offline; it is started on a free port (-p 0) and reports the port it took.
const prismEntry = createRequire(import.meta.url).resolve('@stoplight/prism-cli');
const specPath = fileURLToPath(new URL('./__fixtures__/petstore-3.0.yaml', import.meta.url));

let prism: ChildProcess;
let baseUrl: string;
let output = '';

beforeAll(async () => {
  prism = spawn(process.execPath, [prismEntry, 'mock', '-h', '127.0.0.1', '-p', '0', specPath], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  baseUrl = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const listening = /Prism is listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (listening?.[1] !== undefined) resolve(listening[1]);
    };
    prism.stdout?.on('data', onData);
    prism.stderr?.on('data', onData);
    prism.once('exit', (code) =>
      reject(new Error(`prism exited with ${code} before listening:\n${output}`)),
    );
  });
}, 300_000); // Prism takes seconds alone and minutes on a starved machine (a 60 s hook timed out at load 15).

afterAll(async () => {
  if (prism.exitCode === null && prism.signalCode === null) {
    const exited = once(prism, 'exit');
    prism.kill('SIGTERM');
    await exited;
  }
});

describe('against a Prism mock of the petstore', () => {
  const load = () =>
    OpenApiToolAdapter.fromFile(specPath, {
      baseUrl,
      auth: { type: 'apiKey', value: 'any-key' },
      onWarning: () => undefined,
    });

  it('every request the tools build passes Prism’s validation', async () => {
    const adapter = await load();
    const calls: [string, Record<string, unknown>][] = [
      ['listPets', { limit: 10, tags: ['dog', 'cat'], sort: ['name', 'id'] }],
      [
        'searchPets',
        { filter: { status: 'sold', tag: 'dog' }, 'X-Request-Id': 'r1', session: 's' },
      ],
      ['showPetById', { petId: 7 }],
      ['createPet', { body: { name: 'Kit', tag: null, category: { name: 'cats' } } }],
      ['addPetNote', { petId: 7, body: { text: 'hello', author: 'me' } }],
      ['uploadPetFile', { petId: 7, body: { caption: 'c', file: 'content' } }],
      ['deletePet', { petId: 7 }],
      ['getReport', {}],
    ];
    for (const [name, args] of calls) {
      const result = await callTool(adapter.tool(name), args);
      expect({
        name,
        status: result.details?.status,
        error: result.isError ? resultText(result) : undefined,
      }).toEqual({
        name,
        status: expect.any(Number),
        error: undefined,
      });
      expect(result.details?.status).toBeLessThan(300);
    }
    const pet = await callTool(adapter.tool('showPetById'), { petId: 7 });
    expect(resultJson(pet)).toHaveProperty('name');
  });

  it('a request Prism rejects comes back as an error result the model can read', async () => {
    const adapter = await load();
    // Skips validation on purpose (execute directly) so that Prism sees an out-of-range limit.
    const tool = adapter.tool('listPets');
    if (tool === undefined) throw new Error('listPets missing');
    const result = await tool.execute(
      { limit: 500 },
      {
        toolCallId: 'c',
        toolName: tool.name,
        signal: new AbortController().signal,
        onUpdate: () => undefined,
        onProgress: () => undefined,
      },
    );
    expect(result.isError).toBe(true);
    expect(resultText(result)).toMatch(
      /^HTTP 422 Unprocessable Content\nGET http:\/\/127\.0\.0\.1:\d+\/pets\?limit=500\n/,
    );
    expect(resultText(result)).toContain('limit');
    const unauthorised = await callTool(
      (await OpenApiToolAdapter.fromFile(specPath, { baseUrl, onWarning: () => undefined })).tool(
        'createPet',
      ),
      { body: { name: 'Kit' } },
    );
    expect(unauthorised.isError).toBe(true);
    expect(resultText(unauthorised)).toMatch(
      /^HTTP 401 Unauthorized \(The API key is missing or wrong\)/,
    );
  });
});
