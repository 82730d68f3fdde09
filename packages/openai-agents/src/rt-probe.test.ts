import { defineTool, PermissionPolicy } from '@agent/core';
import { closeWireServers, JSON_HEADERS, startWireServer, type WireResponse } from '@agent/tooling-wire-server';
import { Agent, OpenAIChatCompletionsModel, RunState, run, setTracingDisabled } from '@openai/agents';
import OpenAI from 'openai';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { toOpenAIAgentsTools } from './openai-agents-tools.js';

beforeAll(() => setTracingDisabled(true));
afterEach(closeWireServers);
function completion(answer: { text?: string; calls?: { id: string; name: string; raw: string }[] }): WireResponse {
  const calls = answer.calls ?? [];
  return { status: 200, headers: JSON_HEADERS, body: JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'gpt-4o',
    choices: [{ index: 0, message: { role: 'assistant', content: answer.text ?? null, refusal: null,
      ...(calls.length ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.raw } })) } : {}) },
      finish_reason: calls.length ? 'tool_calls' : 'stop', logprobs: null }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }) };
}
function mk() {
  const calls: unknown[] = [];
  const tool = defineTool({ name: 'get_weather', description: 'w', input: z.object({ city: z.string() }),
    permissionSubjects: ({ city }) => [city], execute: async (a) => { calls.push(a); return `ok ${a.city}`; } });
  return { tool, calls };
}
async function agentAt(answers: WireResponse[], tools: any[], options: any = {}) {
  const server = await startWireServer(answers);
  const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'sk', maxRetries: 0 });
  const agent = new Agent({ name: 'a', instructions: 'x', model: new OpenAIChatCompletionsModel(client, 'gpt-4o'), tools: toOpenAIAgentsTools(tools, options) });
  return { server, agent };
}
const toolMsgs = (server: any, i: number) => (server.requests[i]?.json?.messages ?? []).filter((m: any) => m.role === 'tool');
describe('probe args', () => {
  for (const raw of ['{"city":', 'not json', '[1,2]', '"Paris"', 'null', '{"city":"P","__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"x":1}},"city":"P"}', '{"city":"P","extra":1}', `{"city":"${'a'.repeat(2_000_000)}"}`, '']) {
    it(raw.slice(0, 40), async () => {
      const { tool, calls } = mk();
      const { server, agent } = await agentAt([completion({ calls: [{ id: 'call_1', name: 'get_weather', raw }] }), completion({ text: 'done' })], [tool]);
      let out: string;
      try { const r = await run(agent, 'x'); out = `final=${r.finalOutput} tool=${JSON.stringify(toolMsgs(server, 1)).slice(0, 300)}`; } catch (e) { out = `THREW ${(e as Error).constructor.name}: ${(e as Error).message}`; }
      console.log('ARG', JSON.stringify(raw.slice(0, 40)), out, 'calls', JSON.stringify(calls).slice(0, 100), ({} as any).polluted);
    });
    it(`asked ${raw.slice(0, 40)}`, async () => {
      const { tool, calls } = mk();
      const { server, agent } = await agentAt([completion({ calls: [{ id: 'call_1', name: 'get_weather', raw }] }), completion({ text: 'done' })], [tool], { permissions: new PermissionPolicy({}) });
      let out: string;
      try { const r = await run(agent, 'x'); out = `final=${r.finalOutput} intr=${r.interruptions.length} tool=${JSON.stringify(toolMsgs(server, 1)).slice(0, 300)}`; } catch (e) { out = `THREW ${(e as Error).constructor.name}: ${(e as Error).message}`; }
      console.log('ASKED', JSON.stringify(raw.slice(0, 40)), out, 'calls', JSON.stringify(calls).slice(0, 100));
    });
  }
});
describe('probe approvals', () => {
  it('serialized RunState into a new process (new adapter)', async () => {
    const { tool, calls } = mk();
    const answers = [completion({ calls: [{ id: 'call_1', name: 'get_weather', raw: '{"city":"Paris"}' }] }), completion({ text: 'done' })];
    const { server, agent } = await agentAt(answers, [tool], { permissions: new PermissionPolicy({}) });
    const first = await run(agent, 'x');
    const saved = first.state.toString();
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'sk', maxRetries: 0 });
    const agent2 = new Agent({ name: 'a', instructions: 'x', model: new OpenAIChatCompletionsModel(client, 'gpt-4o'), tools: toOpenAIAgentsTools([tool], { permissions: new PermissionPolicy({}) }) });
    const state = await RunState.fromString(agent2, saved);
    const [i] = state.getInterruptions();
    state.approve(i!);
    const second = await run(agent2, state);
    console.log('RESUME', second.finalOutput, JSON.stringify(calls), JSON.stringify(toolMsgs(server, 1)));
  });
  it('serialized state edited: approved call args changed', async () => {
    const { tool, calls } = mk();
    const answers = [completion({ calls: [{ id: 'call_1', name: 'get_weather', raw: '{"city":"Paris"}' }] }), completion({ text: 'done' })];
    const { server, agent } = await agentAt(answers, [tool], { permissions: new PermissionPolicy({}) });
    const first = await run(agent, 'x');
    const saved = first.state.toString().replaceAll('{\\"city\\":\\"Paris\\"}', '{\\"city\\":\\"Rome\\"}');
    console.log('EDITED has Rome', saved.includes('Rome'));
    const state = await RunState.fromString(agent, saved);
    const [i] = state.getInterruptions();
    state.approve(i!);
    const second = await run(agent, state);
    console.log('EDIT', second.finalOutput, second.interruptions.length, JSON.stringify(calls), JSON.stringify(toolMsgs(server, 1)));
  });
  it('approve then reject (answered twice)', async () => {
    const { tool, calls } = mk();
    const answers = [completion({ calls: [{ id: 'call_1', name: 'get_weather', raw: '{"city":"Paris"}' }] }), completion({ text: 'done' })];
    const { server, agent } = await agentAt(answers, [tool], { permissions: new PermissionPolicy({}) });
    const first = await run(agent, 'x');
    const [i] = first.interruptions;
    first.state.approve(i!); first.state.reject(i!);
    const second = await run(agent, first.state);
    console.log('TWICE', second.finalOutput, JSON.stringify(calls), JSON.stringify(toolMsgs(server, 1)));
  });
  it('alwaysApprove then another call other args', async () => {
    const { tool, calls } = mk();
    const answers = [completion({ calls: [{ id: 'call_1', name: 'get_weather', raw: '{"city":"Paris"}' }] }), completion({ calls: [{ id: 'call_2', name: 'get_weather', raw: '{"city":"Rome"}' }] }), completion({ text: 'done' })];
    const { server, agent } = await agentAt(answers, [tool], { permissions: new PermissionPolicy({}) });
    const first = await run(agent, 'x');
    const [i] = first.interruptions;
    first.state.approve(i!, { alwaysApprove: true });
    const second = await run(agent, first.state);
    console.log('ALWAYS', second.finalOutput, second.interruptions.length, JSON.stringify(calls));
  });
  it('two calls same id', async () => {
    const { tool, calls } = mk();
    const answers = [completion({ calls: [{ id: 'call_1', name: 'get_weather', raw: '{"city":"Paris"}' }, { id: 'call_1', name: 'get_weather', raw: '{"city":"Rome"}' }] }), completion({ text: 'done' })];
    const { server, agent } = await agentAt(answers, [tool], { permissions: new PermissionPolicy({}) });
    const first = await run(agent, 'x');
    console.log('SAMEID intr', first.interruptions.map((x: any) => x.rawItem?.arguments));
    const paris = first.interruptions.find((x: any) => x.rawItem?.arguments?.includes('Paris'));
    if (paris) first.state.approve(paris);
    const second = await run(agent, first.state);
    console.log('SAMEID', second.finalOutput, second.interruptions.length, JSON.stringify(calls));
  });
});
