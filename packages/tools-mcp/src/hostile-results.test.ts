// Results a hostile (or broken) server returns, each through a real stdio server process: images
// a provider cannot take (which, kept in the conversation, failed every later request of the
// session) become a line saying why; links to the client's own files are never read by the client.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { McpToolAdapter } from './mcp-tool-adapter.js';
import { modelText, nodeServer, testContext } from './test-helpers.js';

const entry = fileURLToPath(new URL('./__fixtures__/hostile-results-server.mjs', import.meta.url));
const adapters: McpToolAdapter[] = [];
afterEach(async () => {
  await Promise.all(adapters.splice(0).map((adapter) => adapter.close()));
});

async function call(name: string) {
  const adapter = await McpToolAdapter.connect({ name: 'hostile', transport: nodeServer(entry) });
  adapters.push(adapter);
  const tool = adapter.tools().find((each) => each.name === `hostile__${name}`);
  if (tool === undefined) throw new Error(`no tool ${name}`);
  return tool.execute({}, testContext());
}

describe('hostile results', () => {
  it('only real PNG, JPEG, GIF or WebP images under 5 MiB reach the model; the others say why', async () => {
    const result = await call('images');
    const images = result.content.filter((part) => part.type === 'image');
    expect(images).toHaveLength(1);
    expect(images[0]).toMatchObject({ mimeType: 'image/png' });
    const text = modelText(result);
    expect(text).toContain(
      '[Image (image/png, 38 bytes) not shown to the model: its bytes are not of type image/png]',
    );
    expect(text).toContain(
      '[Image (image/svg+xml, 41 bytes) not shown to the model: not a PNG, JPEG, GIF or WebP image]',
    );
    expect(text).toContain('not shown to the model: over the 5242880-byte limit for images]');
    expect(text).toContain(
      '[Image (image/jpeg, 70 bytes) not shown to the model: its bytes are not of type image/jpeg]',
    );
    expect(text).toContain(
      '[Its image (image/png, 24 bytes) not shown to the model: its bytes are not of type image/png]',
    );
    // What the server sent is still there for the application.
    expect(result.details?.content).toHaveLength(6);
  });

  it('an image whose data is not base64 fails the call (the SDK checks it), naming where', async () => {
    await expect(call('bad-base64')).rejects.toThrow(
      'the server\'s answer does not follow the MCP schema (at "content.0.data": Invalid Base64 string)',
    );
  });

  it('a resource link or an embedded resource naming file:///etc/passwd is never read by the client', async () => {
    const result = await call('links');
    const text = modelText(result);
    expect(text).toContain('[Resource link: passwd <file:///etc/passwd>]');
    expect(text).toContain('what the server says');
    const passwd = readFileSync('/etc/passwd', 'utf8').split('\n')[0] ?? 'root:';
    expect(text).not.toContain(passwd);
  });
});
