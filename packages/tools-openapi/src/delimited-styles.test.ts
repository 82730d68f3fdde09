// spaceDelimited / pipeDelimited / (Swagger 2.0) tsv parameters and form fields: `explode: true`
// (undefined in OpenAPI 3.0–3.2) sends each value as its own pair, as Prism reads it — it joined
// them before, which Prism read as one value; and a value holding the delimiter is refused, since
// the delimiter and that character are the same octets on the wire.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ToolError } from '@agent/core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { joiningDelimiter } from './delimited-values.js';
import { OpenApiToolAdapter } from './index.js';
import { callTool, resultText } from './test-helpers.js';

const integers = { type: 'array', items: { type: 'integer' } };
const colours = { type: 'array', items: { type: 'string', enum: ['red', 'green', 'blue'] } };
const words = { type: 'array', items: { type: 'string' } };
const numbersByKey = { type: 'object', additionalProperties: { type: 'integer' } };
const ok = { 200: { description: 'ok', content: { 'application/json': { schema: {} } } } };

function query(name: string, style: string, explode: boolean, schema: object) {
  return { name, in: 'query', style, explode, schema };
}

/** One document for both the local server and Prism (arrays only: Prism refuses objects here). */
function document(origin: string, withObjects: boolean) {
  return {
    openapi: '3.1.0',
    info: { title: 'Delimited', version: '1' },
    servers: [{ url: origin }],
    paths: {
      '/exploded': {
        get: {
          operationId: 'exploded',
          parameters: [
            query('ids', 'spaceDelimited', true, integers),
            query('colours', 'pipeDelimited', true, colours),
            ...(withObjects ? [query('counts', 'pipeDelimited', true, numbersByKey)] : []),
          ],
          responses: ok,
        },
      },
      '/joined': {
        get: {
          operationId: 'joined',
          parameters: [
            query('ids', 'spaceDelimited', false, integers),
            query('colours', 'pipeDelimited', false, colours),
            query('words', 'spaceDelimited', false, words),
            query('piped', 'pipeDelimited', false, words),
            ...(withObjects
              ? [
                  query('counts', 'pipeDelimited', false, numbersByKey),
                  { ...query('reserved', 'pipeDelimited', false, words), allowReserved: true },
                  query('csv', 'form', false, words),
                  { ...query('csvReserved', 'form', false, words), allowReserved: true },
                ]
              : []),
          ],
          responses: ok,
        },
      },
      '/form': {
        post: {
          operationId: 'form',
          requestBody: {
            content: {
              'application/x-www-form-urlencoded': {
                schema: {
                  type: 'object',
                  properties: { spread: words, spaced: words, piped: words, listed: words },
                },
                encoding: {
                  listed: { style: 'form', explode: false },
                  spread: { style: 'pipeDelimited', explode: true },
                  spaced: { style: 'spaceDelimited', explode: false },
                  piped: { style: 'pipeDelimited' },
                },
              },
            },
          },
          responses: ok,
        },
      },
    },
  };
}

describe('on the wire (a local server)', () => {
  let server: Server;
  let origin = '';
  const seen: { url: string; body: string }[] = [];
  beforeAll(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => {
        body += chunk;
      });
      request.on('end', () => {
        seen.push({ url: request.url ?? '', body });
        response.setHeader('content-type', 'application/json');
        response.end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    seen.length = 0;
  });
  const adapter = () => OpenApiToolAdapter.fromSpec(document(origin, true));

  it('explode: true sends each array value and each object entry as its own pair', async () => {
    const result = await callTool(adapter().tool('exploded'), {
      ids: [1, 2, 3],
      colours: ['red', 'blue'],
      counts: { R: 100, G: 200 },
    });
    expect(result.isError).toBeFalsy();
    expect(seen.at(-1)?.url).toBe(
      '/exploded?ids=1&ids=2&ids=3&colours=red&colours=blue&R=100&G=200',
    );
  });

  it('explode: false joins with the percent-encoded delimiter, objects as key, value', async () => {
    await callTool(adapter().tool('joined'), {
      ids: [1, 2, 3],
      colours: ['red', 'green'],
      // A "|" is not a space's delimiter: encoded, it stays distinct from %20.
      words: ['a|b', 'c'],
      piped: ['a b', 'c'],
      counts: { R: 100, G: 200 },
      reserved: ['a/b', 'c?d'],
    });
    expect(seen.at(-1)?.url).toBe(
      '/joined?ids=1%202%203&colours=red%7Cgreen&words=a%7Cb%20c&piped=a%20b%7Cc&counts=R%7C100%7CG%7C200&reserved=a/b%7Cc?d',
    );
  });

  it.each([
    ['a space inside a spaceDelimited value', { words: ['a b', 'c'] }, 'words'],
    ['a leading space', { words: [' a'] }, 'words'],
    ['a "|" inside a pipeDelimited value', { piped: ['a|b'] }, 'piped'],
    ['a "|" under allowReserved', { reserved: ['x|y', 'z'] }, 'reserved'],
    ['a "|" in an object key', { counts: { 'R|G': 1 } }, 'counts'],
    ['a "," in a form value under allowReserved', { csvReserved: ['a,b', 'c'] }, 'csvReserved'],
  ])('refuses %s: the server would read more values', async (_, args, property) => {
    const error = await callTool(adapter().tool('joined'), args).catch((caught) => caught);
    expect(ToolError.isInstance(error) && error.kind).toBe('invalid-args');
    expect(String(error)).toContain(`at "${property}"`);
    expect(String(error)).toMatch(/uses between values/);
    expect(seen).toEqual([]);
  });

  it('form, not exploded: a "," inside a value is %2C, the delimiter stays "," (allowReserved: "/" kept)', async () => {
    await callTool(adapter().tool('joined'), { csv: ['a,b', 'c'], csvReserved: ['a/b', 'c'] });
    expect(seen.at(-1)?.url).toBe('/joined?csv=a%2Cb,c&csvReserved=a/b,c');
  });

  it('a form body: a "," inside a value of a field joined by commas is refused', async () => {
    const error = await callTool(adapter().tool('form'), {
      body: { listed: ['a,b', 'c'] },
    }).catch((caught) => caught);
    expect(ToolError.isInstance(error) && error.kind).toBe('invalid-args');
    expect(String(error)).toContain('at "body.listed": "a,b" holds a ","');
    await callTool(adapter().tool('form'), { body: { listed: ['a', 'b'] } });
    expect(seen.at(-1)?.body).toBe('listed=a%2Cb');
  });

  it('a form body: exploded fields repeat, joined ones refuse their own delimiter', async () => {
    await callTool(adapter().tool('form'), {
      body: { spread: ['a|b', 'c'], spaced: ['x', 'y'], piped: ['1', '2'] },
    });
    expect(seen.at(-1)?.body).toBe('spread=a%7Cb&spread=c&spaced=x%20y&piped=1%7C2');
    const error = await callTool(adapter().tool('form'), {
      body: { spaced: ['x y'] },
    }).catch((caught) => caught);
    expect(ToolError.isInstance(error) && error.kind).toBe('invalid-args');
    expect(String(error)).toContain('at "body.spaced"');
    expect(seen).toHaveLength(1);
  });

  it('Swagger 2.0 tsv: a tab inside a value is refused, others are joined by %09', async () => {
    const swagger = OpenApiToolAdapter.fromSpec({
      swagger: '2.0',
      info: { title: 'Tabs', version: '1' },
      host: origin.slice('http://'.length),
      schemes: ['http'],
      paths: {
        '/t': {
          get: {
            operationId: 'tabs',
            parameters: [
              {
                name: 't',
                in: 'query',
                type: 'array',
                items: { type: 'string' },
                collectionFormat: 'tsv',
              },
            ],
            responses: { 200: { description: 'ok' } },
          },
        },
      },
    });
    await callTool(swagger.tool('tabs'), { t: ['a b', 'c'] });
    expect(seen.at(-1)?.url).toBe('/t?t=a%20b%09c');
    const error = await callTool(swagger.tool('tabs'), { t: ['a\tb'] }).catch((caught) => caught);
    expect(ToolError.isInstance(error) && error.kind).toBe('invalid-args');
  });
});

// Stoplight Prism validates each request against the document; started on a free port (-p 0).
describe('against Prism', () => {
  const prismEntry = createRequire(import.meta.url).resolve('@stoplight/prism-cli');
  const directory = mkdtempSync(join(tmpdir(), 'delimited-'));
  let prism: ChildProcess | undefined;
  let baseUrl = '';
  beforeAll(async () => {
    const file = join(directory, 'delimited.json');
    writeFileSync(file, JSON.stringify(document('http://localhost', false)));
    const child = spawn(
      process.execPath,
      [prismEntry, 'mock', '-h', '127.0.0.1', '-p', '0', file],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    prism = child;
    let output = '';
    baseUrl = await new Promise<string>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString('utf8');
        const listening = /Prism is listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
        if (listening?.[1] !== undefined) resolve(listening[1]);
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.once('exit', (code) => reject(new Error(`prism exited with ${code}:\n${output}`)));
    });
  }, 300_000); // Prism takes seconds alone and minutes on a starved machine.
  afterAll(async () => {
    if (prism !== undefined && prism.exitCode === null && prism.signalCode === null) {
      const exited = once(prism, 'exit');
      prism.kill('SIGTERM');
      await exited;
    }
    rmSync(directory, { recursive: true, force: true });
  });

  it('accepts exploded and joined delimited arrays as we send them', async () => {
    const adapter = OpenApiToolAdapter.fromSpec(document(baseUrl, false));
    const calls: [string, Record<string, unknown>][] = [
      ['exploded', { ids: [1, 2, 3], colours: ['red', 'blue'] }],
      ['exploded', { ids: [7], colours: ['green'] }],
      // Not `ids` joined: Prism 5 decodes the query, then splits a spaceDelimited value on the
      // text "%20" — never found — so `ids=1%202` (the specification's own form) reads as "1 2".
      ['joined', { colours: ['red', 'green'], piped: ['x y', 'z'] }],
    ];
    for (const [name, args] of calls) {
      const result = await callTool(adapter.tool(name), args);
      expect({
        name,
        args,
        status: result.details?.status,
        text: resultText(result).slice(0, 300),
      }).toMatchObject({ name, args, status: 200 });
    }
  });

  it('the control: Prism refuses a value outside the enum', async () => {
    const adapter = OpenApiToolAdapter.fromSpec(document(baseUrl, false));
    const tool = adapter.tool('exploded');
    // Past the tool's own validation, as a model's raw arguments would not get.
    const result = await tool?.execute(
      { colours: ['purple'] },
      {
        toolCallId: 'c',
        toolName: 'exploded',
        signal: new AbortController().signal,
        onUpdate: () => undefined,
        onProgress: () => undefined,
      },
    );
    expect(result?.details?.status).toBe(422);
  });
});

describe('a style named like an Object.prototype property', () => {
  it('has no joining delimiter (the table is read by its own entries only)', () => {
    for (const style of ['constructor', 'toString', '__proto__'])
      expect(joiningDelimiter(style, false)).toBeUndefined();
    expect(joiningDelimiter('pipeDelimited', false)).toBe('|');
  });
});
