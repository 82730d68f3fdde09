// Results too large for a model's request: the agent loop clips only results older than the
// newest batch, so a tool or resource answer of millions of characters (or dozens of megabytes of
// images) went to the provider whole, which refused it — and kept refusing, since it stays in the
// conversation. Each result is bounded at the source (maxResultChars; 20 images, 20 MiB), with a
// note outside the server's fenced words. A resource's image a provider cannot take is described,
// as a tool result's is.
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { McpToolAdapter } from './mcp-tool-adapter.js';
import { modelText, nodeServer, testContext } from './test-helpers.js';

const entry = fileURLToPath(
  new URL('./__fixtures__/oversized-results-server.mjs', import.meta.url),
);
const adapters: McpToolAdapter[] = [];
afterEach(async () => {
  await Promise.all(adapters.splice(0).map((adapter) => adapter.close()));
});

async function call(name: string, options: { maxResultChars?: number } = {}, args = {}) {
  const adapter = await McpToolAdapter.connect({
    name: 'big',
    transport: nodeServer(entry),
    ...options,
  });
  adapters.push(adapter);
  const tool = adapter.tools().find((each) => each.name === `big__${name}`);
  if (tool === undefined) throw new Error(`no tool ${name}`);
  return tool.execute(args, testContext());
}

/** Characters the model reads: every text block, JSON blocks as their text. */
function modelChars(result: Awaited<ReturnType<typeof call>>): number {
  return result.content.reduce(
    (sum, block) =>
      sum +
      (block.type === 'text'
        ? block.text.length
        : block.type === 'json'
          ? JSON.stringify(block.value).length
          : 0),
    0,
  );
}

const fenceEnd = /----- END UNTRUSTED MCP CONTENT [0-9a-f]{12} -----$/;

describe('tool results over the budget', () => {
  it('5,000,000 characters: head and tail kept, fence whole, our note after it', async () => {
    const result = await call('huge-text');
    expect(modelChars(result)).toBeLessThan(102_000);
    const [server, note] = result.content;
    expect(server?.type === 'text' && fenceEnd.test(server.text)).toBe(true);
    const text = modelText(result);
    expect(text).toContain('START');
    expect(text).toContain('END');
    expect(note).toEqual({
      type: 'text',
      text: expect.stringMatching(
        /^\[The result was too large: 4,90\d,\d{3} characters of text were cut \(maxResultChars: 100,000\)\./,
      ),
    });
    // What the server sent stays in details for the application.
    const sent = result.details?.content[0];
    expect(sent?.type === 'text' && sent.text.length).toBe(5_000_008);
  });

  it('500 blocks: the first ones kept whole, the rest counted in the note', async () => {
    const result = await call('many-texts', { maxResultChars: 10_500 });
    expect(modelChars(result)).toBeLessThan(14_000);
    const text = modelText(result);
    expect(text).toContain('0000bbb');
    expect(text).toContain('0009bbb');
    expect(text).not.toContain('0011bbb');
    expect(result.content.at(-1)).toMatchObject({
      type: 'text',
      text: expect.stringContaining('489,500 characters of text were cut'),
    });
  });

  it('structured content of 2,000,000 characters is cut to text too', async () => {
    const result = await call('huge-structured');
    expect(modelChars(result)).toBeLessThan(102_000);
    expect(result.content.at(-1)).toMatchObject({
      type: 'text',
      text: expect.stringContaining('characters of text were cut'),
    });
  });

  it('30 images: 20 reach the model, the rest are said to be left out', async () => {
    const result = await call('many-images');
    expect(result.content.filter((block) => block.type === 'image')).toHaveLength(20);
    expect(result.content.at(-1)).toMatchObject({
      type: 'text',
      text: expect.stringContaining('10 images were left out (at most 20 images and 20 MiB'),
    });
  });

  it('six images of 4.5 MiB: those within 20 MiB together reach the model', async () => {
    const result = await call('big-images');
    expect(result.content.filter((block) => block.type === 'image')).toHaveLength(4);
    expect(result.content.at(-1)).toMatchObject({
      type: 'text',
      text: expect.stringContaining('2 images were left out'),
    });
  });

  it('maxResultChars: Infinity passes the text whole (a program that wants it all)', async () => {
    const result = await call('huge-text', { maxResultChars: Number.POSITIVE_INFINITY });
    expect(modelChars(result)).toBeGreaterThan(5_000_000);
  });
});

describe('resources', () => {
  it('a listing of 200,000 resources is bounded, fenced, with our note', async () => {
    const result = await call('list_resources');
    expect(modelChars(result)).toBeLessThan(102_000);
    expect(modelText(result)).toContain('many://x/0 ');
    expect(result.content.at(-1)).toMatchObject({
      type: 'text',
      text: expect.stringContaining('characters of text were cut'),
    });
  });

  it('100 contents of 100,000 characters are bounded together', async () => {
    const result = await call('read_resource', {}, { uri: 'many://x' });
    expect(modelChars(result)).toBeLessThan(102_000);
  });

  it.each([
    ['svg://x', 'not a PNG, JPEG, GIF or WebP image'],
    ['fake-png://x', 'its bytes are not of type image/png'],
  ])('an image resource %s a provider cannot take is described, not passed', async (uri, why) => {
    const result = await call('read_resource', {}, { uri });
    expect(result.content.filter((block) => block.type === 'image')).toEqual([]);
    expect(modelText(result)).toContain(why);
  });
});
