import { ToolError, toolNamePattern } from '@agent/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type McpAgentTool, McpToolAdapter } from './mcp-tool-adapter.js';
import {
  isAlive,
  nodeServer,
  referenceServerEntry,
  resultText,
  testContext,
} from './test-helpers.js';

// The official "everything" reference server over stdio: every content type, progress, tasks.
describe('McpToolAdapter with the everything server (stdio)', () => {
  let adapter: McpToolAdapter;
  const tool = (mcpName: string): McpAgentTool => {
    const found = adapter.tools().find((candidate) => candidate.name === `everything__${mcpName}`);
    if (found === undefined) throw new Error(`no tool ${mcpName}`);
    return found;
  };

  beforeAll(async () => {
    adapter = await McpToolAdapter.connect({
      name: 'everything',
      transport: nodeServer(referenceServerEntry('everything'), ['stdio']),
    });
  });
  afterAll(async () => {
    await adapter.close();
  });

  it('lists the tools with namespaced wire names, titles as labels, source and policy', () => {
    const tools = adapter.tools();
    const names = tools.map((candidate) => candidate.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'everything__echo',
        'everything__get-sum',
        'everything__get-tiny-image',
        'everything__trigger-long-running-operation',
        'everything__get-structured-content',
      ]),
    );
    for (const candidate of tools) {
      expect(candidate.name).toMatch(toolNamePattern);
      expect(candidate.source).toBe('mcp:everything');
      expect(candidate.parameters.type).toBe('object');
      expect(JSON.stringify(candidate.parameters)).not.toMatch(/"\$(ref|schema)"/);
    }
    const echo = tool('echo');
    expect(echo.label).toBe('Echo Tool');
    expect(echo.description).toBe('Echoes back the input string');
    expect(echo.parameters.required).toEqual(['message']);
    // Its readOnlyHint schedules it beside others; the gate still sees full-access (the server's claim).
    expect(echo.policy?.permission).toBe('full-access');
    expect(echo.policy?.exclusive).toBeUndefined();
    expect(echo.policy?.resourceKey).toBeUndefined();
    expect(echo.permissionSubjects?.({ message: 'x' })).toEqual(['everything/echo']);
    // Not read-only and not destructive: serialised per server, not exclusive.
    const gzip = tool('gzip-file-as-resource');
    expect(gzip.policy?.permission).toBe('full-access');
    expect(gzip.policy?.resourceKey?.({})).toBe('mcp:everything');
    expect(gzip.policy?.exclusive).toBeUndefined();
    expect(adapter.serverInfo?.name).toBe('mcp-servers/everything');
    expect(adapter.instructions).toEqual(expect.any(String));
    expect(adapter.status).toBe('connected');
  });

  it('maps text results', async () => {
    const result = await tool('echo').execute({ message: 'hi' }, testContext());
    expect(result.content).toHaveLength(1);
    // The server's words, fenced as such (resultText checks the note and markers).
    expect(resultText(result)).toBe('Echo: hi');
    expect(result.content[0]).toMatchObject({
      type: 'text',
      text: expect.stringMatching(
        /^Untrusted: the text between the UNTRUSTED MCP CONTENT markers comes from the MCP server "everything"; [^\n]*\n\n----- BEGIN UNTRUSTED MCP CONTENT [0-9a-f]{12} -----\nEcho: hi\n----- END UNTRUSTED MCP CONTENT [0-9a-f]{12} -----$/,
      ),
    });
    expect(result.isError).toBeUndefined();
    expect(result.details).toMatchObject({ server: 'everything', tool: 'echo' });
  });

  it('maps images to image content with base64 data and mime type', async () => {
    const result = await tool('get-tiny-image').execute({}, testContext());
    expect(result.content.map((part) => part.type)).toEqual(['text', 'image', 'text']);
    const image = result.content[1];
    expect(image).toMatchObject({ type: 'image', mimeType: 'image/png' });
    if (image?.type !== 'image') throw new Error('not an image');
    expect(Buffer.from(image.data, 'base64').subarray(1, 4).toString()).toBe('PNG');
  });

  it('maps resource links and embedded text and blob resources to readable text', async () => {
    const links = await tool('get-resource-links').execute({ count: 2 }, testContext());
    const linkText = resultText(links);
    expect(linkText).toMatch(
      /\[Resource link: Blob Resource 1 <demo:\/\/resource\/dynamic\/blob\/1>/,
    );
    expect(linkText).toMatch(
      /\[Resource link: Text Resource 2 <demo:\/\/resource\/dynamic\/text\/2>, text\/plain/,
    );

    const text = await tool('get-resource-reference').execute(
      { resourceType: 'Text', resourceId: 3 },
      testContext(),
    );
    expect(resultText(text)).toMatch(
      /\[Resource demo:\/\/resource\/dynamic\/text\/3 \(text\/plain\)\]\n\S/,
    );

    const blob = await tool('get-resource-reference').execute(
      { resourceType: 'Blob', resourceId: 4 },
      testContext(),
    );
    expect(resultText(blob)).toMatch(/bytes of binary data, not shown to the model/);
    expect(blob.details?.content.some((block) => block.type === 'resource')).toBe(true);
  });

  it('keeps structuredContent in details without repeating it in the content', async () => {
    const result = await tool('get-structured-content').execute(
      { location: 'Chicago' },
      testContext(),
    );
    expect(result.details?.structuredContent).toEqual({
      temperature: 36,
      conditions: 'Light rain / drizzle',
      humidity: 82,
    });
    expect(result.content).toHaveLength(1);
    expect(JSON.parse(resultText(result))).toEqual(result.details?.structuredContent);
  });

  it('reports MCP progress notifications as onProgress(text, fraction)', async () => {
    const context = testContext();
    const result = await tool('trigger-long-running-operation').execute(
      { duration: 0.3, steps: 3 },
      context,
    );
    expect(resultText(result)).toMatch(/Long running operation completed/);
    // Progress is passed on at most every 200 ms (a later report replaces one still waiting), so
    // which of the three steps arrive depends on the timing; each is mapped whole, in order.
    const expected = [1, 2, 3].map((step) => ({ text: `${step}/3`, fraction: step / 3 }));
    expect(context.progress.length).toBeGreaterThan(0);
    let previous = -1;
    for (const report of context.progress) {
      const index = expected.findIndex((each) => each.text === report.text);
      expect(report).toEqual(expected[index]);
      expect(index).toBeGreaterThan(previous);
      previous = index;
    }
  });

  it('ends an aborted call as cancelled as soon as it is aborted', async () => {
    const controller = new AbortController();
    const context = testContext({
      signal: controller.signal,
      // Abort on the first progress event: the call is running on the server by then.
      onProgress: () => controller.abort(),
    });
    // 60 s would outlast the test timeout if the abort did not end the call.
    const call = tool('trigger-long-running-operation').execute(
      { duration: 60, steps: 600 },
      context,
    );
    const error = await call.catch((thrown: unknown) => thrown);
    expect(ToolError.isInstance(error) && error.kind).toBe('cancelled');
    // The connection stays usable after a cancelled call.
    const after = await tool('echo').execute({ message: 'still here' }, testContext());
    expect(resultText(after)).toBe('Echo: still here');
  });

  it('runs tools that require MCP tasks, reporting the task status as progress', async () => {
    const research = tool('simulate-research-query');
    const context = testContext();
    const result = await research.execute({ topic: 'tides' }, context);
    expect(resultText(result)).toMatch(/Research Report: tides/);
    expect(context.progress.map((entry) => entry.text)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^Task .* created$/), 'Gathering sources...']),
    );
  });

  it('cancels a task-based call when aborted', async () => {
    const controller = new AbortController();
    const context = testContext({
      signal: controller.signal,
      onProgress: () => controller.abort(),
    });
    const error = await tool('simulate-research-query')
      .execute({ topic: 'never mind' }, context)
      .catch((thrown: unknown) => thrown);
    expect(ToolError.isInstance(error) && error.kind).toBe('cancelled');
  });

  it('turns the SDK server\'s "tool not found" and input validation errors into ToolErrors', async () => {
    const missing = await adapter.callTool('no-such-tool', {}).catch((thrown: unknown) => thrown);
    expect(ToolError.isInstance(missing) && missing.kind).toBe('not-found');
    expect(String(missing)).toMatch(
      /Tool not found: MCP server "everything" has no tool "no-such-tool"/,
    );

    // Bypassing core's validation (execute directly) lets the server judge the arguments.
    const invalid = await tool('get-sum')
      .execute({ a: 'one', b: 2 }, testContext())
      .catch((thrown: unknown) => thrown);
    expect(ToolError.isInstance(invalid) && invalid.kind).toBe('invalid-args');
    expect(String(invalid)).toMatch(/Invalid arguments: .*Input validation error/);
  });

  it('close() stops the server process, is idempotent, and later calls fail as cancelled', async () => {
    const second = await McpToolAdapter.connect({
      name: 'everything2',
      transport: nodeServer(referenceServerEntry('everything'), ['stdio']),
    });
    const pid = second.pid;
    expect(pid).toEqual(expect.any(Number));
    expect(isAlive(pid ?? -1)).toBe(true);
    const echo = second.tools().find((candidate) => candidate.name === 'everything2__echo');
    await Promise.all([second.close(), second.close()]);
    await second.close();
    expect(isAlive(pid ?? -1)).toBe(false);
    expect(second.status).toBe('closed');
    const error = await echo
      ?.execute({ message: 'x' }, testContext())
      .catch((thrown: unknown) => thrown);
    expect(ToolError.isInstance(error) && error.kind).toBe('cancelled');
  });

  it('supports await using', async () => {
    let pid: number | undefined;
    {
      await using scoped = await McpToolAdapter.connect({
        name: 'scoped',
        transport: nodeServer(referenceServerEntry('everything'), ['stdio']),
      });
      pid = scoped.pid;
      expect(isAlive(pid ?? -1)).toBe(true);
    }
    expect(isAlive(pid ?? -1)).toBe(false);
  });
});
