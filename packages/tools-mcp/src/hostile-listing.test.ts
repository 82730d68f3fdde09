// A hostile server's tools/list against the client, each a real stdio server process: schemas
// that explode once their $refs are inlined, descriptions of megabytes, endless pages of tools.
// The server's own good tool must stay usable, and the process must not freeze or fill memory.
import { afterEach, describe, expect, it } from 'vitest';
import { McpToolAdapter } from './mcp-tool-adapter.js';
import { hostileListingServerEntry, nodeServer, resultText, testContext } from './test-helpers.js';

const adapters: McpToolAdapter[] = [];
afterEach(async () => {
  await Promise.all(adapters.splice(0).map((adapter) => adapter.close()));
});

async function connect(scenario: string, extra: { maxTools?: number } = {}) {
  const errors: string[] = [];
  const adapter = await McpToolAdapter.connect({
    name: 'hostile',
    transport: nodeServer(hostileListingServerEntry, [scenario]),
    onError: (error) => errors.push(error.message),
    ...extra,
  });
  adapters.push(adapter);
  return { adapter, errors };
}

async function fineStillWorks(adapter: McpToolAdapter) {
  const fine = adapter.tools().find((tool) => tool.name === 'hostile__fine');
  expect(fine).toBeDefined();
  const result = await fine?.execute({}, testContext());
  expect(result && resultText(result)).toContain('called fine');
}

describe('a hostile tool listing', () => {
  // Before: inlining the 30-level bomb never finished (2^30 nodes), so connect() never returned.
  it('a schema whose $refs double at every level: the tool is kept with a plain object schema, reported', async () => {
    const { adapter, errors } = await connect('schema-bomb');
    const bomb = adapter.tools().find((tool) => tool.name === 'hostile__bomb');
    expect(bomb?.parameters).toEqual({ type: 'object' });
    expect(errors).toEqual([
      expect.stringMatching(
        /^MCP server "hostile", tool "bomb": its input schema is not used \(Tool schema too large once its \$refs are inlined \(over 100,000 objects and arrays\)\)/,
      ),
    ]);
    await fineStillWorks(adapter);
    const result = await bomb?.execute({ x: 'anything' }, testContext());
    expect(result && resultText(result)).toContain('called bomb');
  });

  it.each(['items', 'all-of', 'properties', 'siblings', 'wide'])(
    'the same bomb in another shape (%s)',
    async (name) => {
      const { adapter, errors } = await connect('schema-bombs');
      const tool = adapter.tools().find((each) => each.name === `hostile__${name}`);
      expect(tool?.parameters).toEqual({ type: 'object' });
      expect(errors.filter((error) => error.includes(`tool "${name}"`))).toHaveLength(1);
      await fineStillWorks(adapter);
    },
  );

  // Before: the listing's fingerprint (JSON.stringify) overflowed the stack: connect() failed.
  it('schemas nested 100,000 levels deep: the tool is kept with a plain object schema, reported', async () => {
    const { adapter, errors } = await connect('deep-schema');
    const deep = adapter.tools().find((tool) => tool.name === 'hostile__deep');
    expect(deep?.parameters).toEqual({ type: 'object' });
    expect(errors).toEqual([
      'MCP server "hostile", tool "deep": its inputSchema and outputSchema nest deeper than 100 levels and is not used; any arguments are sent as given',
    ]);
    await fineStillWorks(adapter);
    const result = await deep?.execute({}, testContext());
    expect(result && resultText(result)).toContain('called deep');
  });

  // Before: the 5 MB description went to the model whole, on every turn.
  it('a description of megabytes is cut (with a note) and reported; a huge title is cut', async () => {
    const { adapter, errors } = await connect('huge-description');
    const chatty = adapter.tools().find((tool) => tool.name === 'hostile__chatty');
    expect(chatty?.description.length).toBeLessThan(10_100);
    expect(chatty?.description.startsWith('Start. xxx')).toBe(true);
    expect(chatty?.description.endsWith('… [description cut at 10,000 characters]')).toBe(true);
    expect(chatty?.label?.length).toBeLessThanOrEqual(201);
    expect(errors).toEqual([
      'MCP server "hostile", tool "chatty": its description of 5,000,012 characters is cut at 10,000 (maxDescriptionChars)',
    ]);
    await fineStillWorks(adapter);
  });

  // Before: 3 MB of instructions came back whole, for an application to add to its system prompt.
  it('instructions of megabytes are cut with a note, at maxDescriptionChars', async () => {
    const { adapter } = await connect('huge-description');
    const instructions = adapter.instructions ?? '';
    expect(instructions.startsWith('Begin. yyy')).toBe(true);
    expect(instructions.endsWith('… [instructions cut at 10,000 characters]')).toBe(true);
    expect(instructions.length).toBeLessThan(10_100);
  });

  // Before: the 2 MB version was quoted whole in the connect error (a terminal line of 2 MB).
  it('a protocol version of megabytes: the connect error quotes a bounded part of it', async () => {
    const error = await McpToolAdapter.connect({
      name: 'hostile',
      transport: nodeServer(hostileListingServerEntry, ['huge-version']),
    }).then(
      () => undefined,
      (thrown: unknown) => thrown as Error,
    );
    expect(error?.message).toMatch(/^Cannot connect to MCP server "hostile": .*protocol version/);
    expect(error?.message.length).toBeLessThan(2_200);
  });

  it('maxDescriptionChars raises the bound', async () => {
    const errors: string[] = [];
    const adapter = await McpToolAdapter.connect({
      name: 'hostile',
      transport: nodeServer(hostileListingServerEntry, ['huge-description']),
      maxDescriptionChars: 6_000_000,
      onError: (error) => errors.push(error.message),
    });
    adapters.push(adapter);
    const chatty = adapter.tools().find((tool) => tool.name === 'hostile__chatty');
    expect(chatty?.description.endsWith(' End.')).toBe(true);
    expect(adapter.instructions?.endsWith(' End.')).toBe(true);
    expect(errors).toEqual([]);
  });

  // Before: every page was taken (100 pages × any number of tools a page).
  it('endless pages of tools: the first maxTools are kept, reported once', async () => {
    const { adapter, errors } = await connect('many-tools', { maxTools: 2_500 });
    expect(adapter.tools()).toHaveLength(2_500);
    expect(errors).toEqual([
      'MCP server "hostile" listed more than 2,500 tools; the first 2,500 are kept (maxTools)',
    ]);
    await fineStillWorks(adapter);
  });

  it('endless pages of tools: 10,000 by default', async () => {
    const { adapter, errors } = await connect('many-tools');
    expect(adapter.tools()).toHaveLength(10_000);
    expect(errors).toHaveLength(1);
  });

  // Before: connectTimeoutMs covered the handshake only; the listing (and logging/setLevel) then
  // waited requestTimeoutMs more (60 s), so a 30 s limit held the CLI's start for 90 s.
  it.each([{}, { logLevel: 'info' as const }])(
    'a server that never answers after the handshake fails connect within connectTimeoutMs (%o)',
    async (extra) => {
      await expect(
        McpToolAdapter.connect({
          name: 'hostile',
          transport: nodeServer(hostileListingServerEntry, ['silent']),
          connectTimeoutMs: 1_000,
          ...extra,
        }),
      ).rejects.toThrow(
        /Cannot connect to MCP server "hostile": MCP error -32001: Request timed out/,
      );
    },
  );

  // Before: each notification that came while a listing ran asked for another, back to back
  // (dozens of listings for 300 notifications); now one listing a second at most.
  it('a flood of list_changed notifications: a few listings, the last state still taken', async () => {
    const { adapter } = await connect('list-changed');
    const flood = adapter.tools().find((tool) => tool.name === 'hostile__flood-changes');
    await flood?.execute({}, testContext());
    // Waits for the refresh under way (and the one it owes), then lists once more.
    const tools = await adapter.refreshTools();
    const listed = tools
      .map((tool) => /^hostile__listed-(\d+)$/.exec(tool.name)?.[1])
      .find(Boolean);
    expect(Number(listed)).toBeGreaterThanOrEqual(3);
    // One a second at most: a few while the flood lasts (longer on a loaded machine), never one
    // per notification (300).
    expect(Number(listed)).toBeLessThanOrEqual(15);
  });
});

describe('a flood of resource and prompt notifications', () => {
  it('reaches onResourcesChanged, onPromptsChanged and a subscription a few times, not 300', async () => {
    const counts = { resources: 0, prompts: 0, updated: 0 };
    // Each is called at once, then once more for the end of the flood (within a second of it).
    let twice: () => void = () => undefined;
    const reached = new Promise<void>((resolve) => {
      twice = resolve;
    });
    const count = (key: keyof typeof counts) => () => {
      counts[key]++;
      if (Object.values(counts).every((value) => value >= 2)) twice();
    };
    const adapter = await McpToolAdapter.connect({
      name: 'hostile',
      transport: nodeServer(hostileListingServerEntry, ['list-changed']),
      onResourcesChanged: count('resources'),
      onPromptsChanged: count('prompts'),
    });
    adapters.push(adapter);
    await adapter.subscribeResource('res://x', count('updated'));
    const flood = adapter.tools().find((tool) => tool.name === 'hostile__flood-changes');
    await flood?.execute({}, testContext());
    await reached;
    for (const value of Object.values(counts)) {
      // One a second at most while the flood lasts (longer on a loaded machine), never 300.
      expect(value).toBeLessThanOrEqual(15);
    }
  });
});

describe('a property named __proto__', () => {
  // Plain assignment while inlining the schema set the copy's prototype: the property vanished,
  // `required` still named it, and no call could ever be valid.
  it('stays in the parameters, is required, validates, and reaches the server', async () => {
    const { adapter, errors } = await connect('proto-names');
    const tool = adapter.tools().find((each) => each.name === 'hostile__proto');
    const properties = tool?.parameters.properties ?? {};
    expect(Object.hasOwn(properties, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(properties)).toBe(Object.prototype);
    expect(properties.a).toEqual({ type: 'number' });
    expect(tool?.parameters.required).toEqual(['__proto__']);
    const args = JSON.parse('{"__proto__": "value", "a": 1}') as Record<string, unknown>;
    const { validateWithJsonSchema } = await import('@agent/core');
    expect(validateWithJsonSchema(tool?.parameters ?? {}, args).ok).toBe(true);
    expect(validateWithJsonSchema(tool?.parameters ?? {}, { a: 1 }).ok).toBe(false);
    const result = await tool?.execute(args, testContext());
    expect(JSON.parse(result ? resultText(result) : '{}')).toEqual(args);
    expect(errors).toEqual([]);
    await fineStillWorks(adapter);
  });
});
