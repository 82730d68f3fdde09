import { afterEach, describe, expect, it } from 'vitest';
import { McpToolAdapter } from './mcp-tool-adapter.js';
import { nodeServer, rawStdioServerEntry, resultText, testContext } from './test-helpers.js';

const adapters: McpToolAdapter[] = [];
afterEach(async () => {
  await Promise.all(adapters.splice(0).map((adapter) => adapter.close()));
});

describe('McpToolAdapter over stdio with a raw JSON-RPC server', () => {
  it('delivers every progress notification that arrives in the same read as the result', async () => {
    // Before the fix, both notifications were lost here (the SDK settled the response, dropping
    // the progress handler, before its notification handlers ran).
    const errors: Error[] = [];
    const adapter = await McpToolAdapter.connect({
      name: 'raw',
      transport: nodeServer(rawStdioServerEntry),
      onError: (error) => errors.push(error),
    });
    adapters.push(adapter);
    const tool = adapter.tools().find((each) => each.name === 'raw__progress-then-result');
    for (let round = 0; round < 20; round++) {
      const ctx = testContext();
      const result = await tool?.execute({}, ctx);
      expect(result && resultText(result)).toBe('done');
      expect(ctx.progress).toEqual([
        { text: 'step 1', fraction: 0.5 },
        { text: 'step 2', fraction: 1 },
      ]);
    }
    expect(errors).toEqual([]);
  });

  // Before: each of the 3,000 reached onProgress (a line each in the CLI's terminal).
  it('a flood of progress notifications reaches onProgress a few times, the last one included', async () => {
    const adapter = await McpToolAdapter.connect({
      name: 'raw',
      transport: nodeServer(rawStdioServerEntry),
    });
    adapters.push(adapter);
    const tool = adapter.tools().find((each) => each.name === 'raw__progress-flood');
    const ctx = testContext();
    const result = await tool?.execute({}, ctx);
    expect(result && resultText(result)).toBe('flooded');
    expect(ctx.progress.length).toBeGreaterThanOrEqual(2);
    expect(ctx.progress.length).toBeLessThan(100);
    expect(ctx.progress.at(-1)).toEqual({ text: 'step 3000', fraction: 1 });
  });
});
