import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Agent } from './agent.js';
import { defineTool } from './define-tool.js';
import { AgentError } from './errors.js';
import { createStructuredOutputTool, structuredOutputToolName } from './structured-output.js';
import { createScriptedProvider } from './testing/scripted-provider.js';
import { resultText, toolResults } from './testing/test-helpers.js';

const verdict = z.object({ verdict: z.enum(['pass', 'fail']), reasons: z.array(z.string()) });

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks something up',
  input: z.object({ q: z.string() }),
  policy: { permission: 'read-only' },
  execute: async ({ q }) => `found ${q}`,
});

describe('AgentOptions.output (structured output of the main agent)', () => {
  it('ends the run as completed with the validated value, after other tools', async () => {
    const provider = createScriptedProvider([
      { toolCalls: [{ name: 'lookup', arguments: { q: 'tests' } }] },
      {
        toolCalls: [
          { name: structuredOutputToolName, arguments: { verdict: 'pass', reasons: ['green'] } },
        ],
      },
      { text: 'never requested' },
    ]);
    const agent = new Agent({ provider, model: 'm', tools: [lookup], output: verdict });
    const result = await agent.run('Judge it').result;
    expect(result.stopReason).toBe('completed');
    expect(result.output).toEqual({ verdict: 'pass', reasons: ['green'] });
    expect(provider.calls).toBe(2);
    // The tool is offered with the schema as its parameters.
    const definition = provider.requests[0]?.tools?.find(
      (t) => t.name === structuredOutputToolName,
    );
    expect(definition?.parameters).toMatchObject({
      type: 'object',
      required: ['verdict', 'reasons'],
    });
  });

  it('sends an invalid value back to the model, which fixes it', async () => {
    const provider = createScriptedProvider([
      { toolCalls: [{ name: structuredOutputToolName, arguments: { verdict: 'maybe' } }] },
      {
        toolCalls: [
          { name: structuredOutputToolName, arguments: { verdict: 'fail', reasons: [] } },
        ],
      },
    ]);
    const agent = new Agent({ provider, model: 'm', output: verdict });
    const result = await agent.run('Judge it').result;
    const [first] = toolResults(result.messages);
    expect(first?.isError).toBe(true);
    expect(resultText(first)).toMatch(/Invalid arguments.*verdict/s);
    expect(result.stopReason).toBe('completed');
    expect(result.output).toEqual({ verdict: 'fail', reasons: [] });
  });

  it('reminds a model that stops without it, then fails the run after maxReminders', async () => {
    const reminded = createScriptedProvider([
      { text: 'It passes.' },
      { toolCalls: [{ name: 'verdict', arguments: { verdict: 'pass', reasons: ['ok'] } }] },
    ]);
    const first = await new Agent({
      provider: reminded,
      model: 'm',
      output: { schema: verdict, name: 'verdict' },
    }).run('Judge it').result;
    expect(first.stopReason).toBe('completed');
    expect(first.output).toEqual({ verdict: 'pass', reasons: ['ok'] });
    const reminder = reminded.requests[1]?.messages.at(-1);
    expect(reminder?.role).toBe('user');
    expect(JSON.stringify(reminder?.content)).toContain('Call verdict now');

    const stubborn = createScriptedProvider([{ text: 'No.' }], { whenExhausted: 'repeat-last' });
    const second = await new Agent({
      provider: stubborn,
      model: 'm',
      output: { schema: verdict, maxReminders: 1 },
    }).run('Judge it').result;
    expect(second.stopReason).toBe('error');
    expect(second.error).toBe(
      'The model ended without calling structured_output (reminded 1 time)',
    );
    expect(second.output).toBeUndefined();
    expect(stubborn.calls).toBe(2);
  });

  it('each run starts without a submission', async () => {
    const provider = createScriptedProvider([
      {
        toolCalls: [
          { name: structuredOutputToolName, arguments: { verdict: 'pass', reasons: [] } },
        ],
      },
      { text: 'chat' },
    ]);
    const agent = new Agent({ provider, model: 'm', output: { schema: verdict, maxReminders: 0 } });
    expect((await agent.run('one').result).output).toEqual({ verdict: 'pass', reasons: [] });
    const second = await agent.run('two').result;
    expect(second.output).toBeUndefined();
    expect(second.stopReason).toBe('error');
  });

  it('refuses a tool name already taken, and a schema that is not an object', () => {
    const provider = createScriptedProvider([]);
    const taken = defineTool({
      name: structuredOutputToolName,
      description: 'x',
      input: z.object({}),
      execute: async () => 'x',
    });
    expect(() => new Agent({ provider, model: 'm', tools: [taken], output: verdict })).toThrow(
      AgentError,
    );
    expect(() =>
      createStructuredOutputTool({ schema: z.string(), submit: () => undefined }),
    ).toThrow(/must describe an object/);
  });
});

describe('StructuredOutput (claw-code, Claude Code): the value itself', () => {
  const payload = z.object({ ok: z.boolean(), items: z.array(z.number()) });

  it('runs claw-code’s example through the alias and ends the run with the value', async () => {
    const provider = createScriptedProvider([
      { toolCalls: [{ name: 'StructuredOutput', arguments: { ok: true, items: [1, 2, 3] } }] },
      { text: 'never requested' },
    ]);
    const agent = new Agent({ provider, model: 'm', output: payload });
    const result = await agent.run('Report').result;
    expect(result.stopReason).toBe('completed');
    expect(result.output).toEqual({ ok: true, items: [1, 2, 3] });
    expect(toolResults(agent.messages)[0]?.toolName).toBe(structuredOutputToolName);
  });

  it('claw-code’s empty payload is invalid against a schema that needs fields', async () => {
    const provider = createScriptedProvider([
      { toolCalls: [{ name: 'StructuredOutput', arguments: {} }] },
      { toolCalls: [{ name: 'StructuredOutput', arguments: { ok: false, items: [] } }] },
    ]);
    const agent = new Agent({ provider, model: 'm', output: payload });
    const result = await agent.run('Report').result;
    expect(toolResults(agent.messages)[0]).toMatchObject({
      isError: true,
      errorKind: 'invalid-args',
    });
    expect(result.output).toEqual({ ok: false, items: [] });
  });

  it('leaves the name to an agent tool that already has it', async () => {
    const own = defineTool({
      name: 'StructuredOutput',
      description: 'mine',
      input: z.object({}),
      execute: async () => 'my own tool ran',
    });
    const provider = createScriptedProvider([
      { toolCalls: [{ name: 'StructuredOutput', arguments: {} }] },
      { toolCalls: [{ name: structuredOutputToolName, arguments: { ok: true, items: [] } }] },
    ]);
    const agent = new Agent({ provider, model: 'm', tools: [own], output: payload });
    await agent.run('Report').result;
    expect(resultText(toolResults(agent.messages)[0])).toBe('my own tool ran');
  });
});
