import { describe, expect, it } from 'vitest';
import { toToolResult } from './result-mapping.js';

const names = { server: 's', tool: 't' };

/** A 1×1 PNG. */
const tinyPng =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
describe('toToolResult', () => {
  it('turns structuredContent into a JSON block only when there is no other content', () => {
    const onlyStructured = toToolResult({ content: [], structuredContent: { n: 1 } }, names);
    expect(onlyStructured.content).toEqual([{ type: 'json', value: { n: 1 } }]);
    expect(onlyStructured.details).toEqual({
      server: 's',
      tool: 't',
      content: [],
      structuredContent: { n: 1 },
    });

    const both = toToolResult(
      { content: [{ type: 'text', text: 'one' }], structuredContent: { n: 1 } },
      names,
    );
    expect(both.content).toEqual([{ type: 'text', text: 'one' }]);
    expect(both.details?.structuredContent).toEqual({ n: 1 });
  });

  it('says so when a tool returns nothing, and keeps isError and _meta', () => {
    const result = toToolResult({ content: [], isError: true, _meta: { trace: 'x' } }, names);
    expect(result).toEqual({
      content: [{ type: 'text', text: '(the tool returned no content)' }],
      isError: true,
      details: { server: 's', tool: 't', content: [], meta: { trace: 'x' } },
    });
  });

  it('shows an embedded image resource as an image', () => {
    const result = toToolResult(
      {
        content: [
          {
            type: 'resource',
            resource: { uri: 'file:///a.png', mimeType: 'image/png', blob: tinyPng },
          },
        ],
      },
      names,
    );
    expect(result.content).toEqual([
      { type: 'text', text: '[Resource file:///a.png (image/png)]' },
      { type: 'image', data: tinyPng, mimeType: 'image/png' },
    ]);
  });

  it('describes resource links with title, mime type and description', () => {
    const result = toToolResult(
      {
        content: [
          {
            type: 'resource_link',
            uri: 'file:///r.md',
            name: 'r',
            title: 'Readme',
            mimeType: 'text/markdown',
            description: 'the project readme',
          },
        ],
      },
      names,
    );
    expect(result.content).toEqual([
      {
        type: 'text',
        text: '[Resource link: Readme <file:///r.md>, text/markdown: the project readme]',
      },
    ]);
  });

  it('shows content types newer than this package instead of dropping them', () => {
    const future = { type: 'hologram', frames: 3 } as unknown as { type: 'text'; text: string };
    const result = toToolResult({ content: [future] }, names);
    expect(result.content[0]).toEqual({
      type: 'text',
      text: '[Unsupported MCP content of type "hologram"]\n{"type":"hologram","frames":3}',
    });
  });
});
