import * as fs from 'node:fs';
import * as path from 'node:path';
import { Agent, type AgentRunResult } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultTools } from './default-tools.js';
import { makeTempDir } from './test-helpers.js';

// Regression for output lost under load (many agents in one process, each a turn of 8 parallel
// bash calls): the shell's exit was seen before its output had been read — a busy loop reaps every
// exited child at once, ahead of their pipes — and the pipes were closed as "idle" with the output
// still in them, so the model read "Exit code: 0 / (no output)". Asserts output, never timings.

let dir: string | undefined;

afterEach(() => {
  if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const callsPerAgent = 8;

async function runAgents(agents: number): Promise<AgentRunResult[]> {
  dir = makeTempDir();
  // Unsandboxed: this pins down pipe handling at scale; the sandbox suite covers sandboxed runs.
  const tools = defaultTools({
    cwd: dir,
    bash: { spillDir: path.join(dir, '.spill'), sandbox: 'off' },
  });
  return Promise.all(
    Array.from({ length: agents }, (_, agentIndex) => {
      const provider = createScriptedProvider([
        {
          toolCalls: Array.from({ length: callsPerAgent }, (_, call) => ({
            name: 'bash',
            arguments: { command: `echo out-${agentIndex}-${call}` },
          })),
        },
        { text: 'done' },
      ]);
      const agent = new Agent({
        provider,
        model: 'scripted',
        tools,
        permissionGate: () => ({ behavior: 'allow' }),
      });
      return agent.run('go').result;
    }),
  );
}

describe('bash under load', () => {
  it('100 agents × 8 parallel calls (800 at once): every result carries its own output', async () => {
    const results = await runAgents(100);
    const wrong: string[] = [];
    results.forEach((result, agentIndex) => {
      const outputs = result.messages.flatMap((message) =>
        message.role === 'toolResult'
          ? [message.content.map((part) => (part.type === 'text' ? part.text : '')).join('')]
          : [],
      );
      expect(outputs).toHaveLength(callsPerAgent);
      outputs.forEach((text, call) => {
        if (text !== `out-${agentIndex}-${call}\nExit code: 0`)
          wrong.push(`${agentIndex}-${call}: ${text}`);
      });
    });
    expect(wrong).toEqual([]);
    // 31 s alone; 211 s once with every package testing on 2 cores and a benchmark beside them.
  }, 600_000);
});
