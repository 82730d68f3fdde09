// Test-only fixtures of the permission tests: stand-in tools, requests as the loop builds them,
// a scripted approver (not exported from the package).
import * as z from 'zod';
import type { PermissionRequest } from '../agent-options.js';
import { defineTool } from '../define-tool.js';
import { type AssistantMessage, emptyUsage } from '../messages.js';
import type { ApprovalContext, ApprovalDecision, PermissionApprover } from '../permission-types.js';
import type { PermissionPolicy } from '../permissions.js';
import type { AnyAgentTool, PermissionTier } from '../tool.js';
import type { ScriptedStep } from './scripted-provider.js';
import { agentWith } from './test-helpers.js';

// A stand-in for the built-in bash tool: one subject per command of a `&&` chain.
export const bash = defineTool({
  name: 'bash',
  aliases: ['shell'],
  source: 'builtin',
  description: 'runs a command line',
  input: z.object({ command: z.string() }),
  permissionSubjects: ({ command }) =>
    command
      .split('&&')
      .map((part) => part.trim())
      .filter((part) => part !== ''),
  execute: async ({ command }) => `ran: ${command}`,
});

export const readFile = defineTool({
  name: 'read_file',
  source: 'builtin',
  description: 'reads a file',
  input: z.object({ path: z.string() }),
  policy: { permission: 'read-only' },
  permissionSubjects: ({ path }) => [path],
  execute: async ({ path }) => `read ${path}`,
});

export const writeFile = defineTool({
  name: 'write_file',
  source: 'builtin',
  description: 'writes a file',
  input: z.object({ path: z.string() }),
  policy: { permission: 'workspace-write' },
  permissionSubjects: ({ path }) => [path],
  execute: async ({ path }) => `wrote ${path}`,
});

// No permissionSubjects: calls have zero subjects.
export const ping = defineTool({
  name: 'ping',
  description: 'pings',
  input: z.object({}),
  execute: async () => 'pong',
});

export const createIssue = defineTool({
  name: 'github__create_issue',
  source: 'mcp:github',
  description: 'creates an issue',
  input: z.object({ title: z.string() }),
  permissionSubjects: () => ['github/create_issue'],
  execute: async ({ title }) => `created ${title}`,
});

export const assistant: AssistantMessage = {
  role: 'assistant',
  content: [],
  provider: 'test',
  model: 'test-model',
  usage: emptyUsage(),
  stopReason: 'toolUse',
  timestamp: 0,
};

let nextCallId = 0;

/** A request as the loop would build it for `tool`, with the given subjects. */
export function requestFor(
  tool: AnyAgentTool,
  subjects: readonly string[],
  options: { requestedName?: string; tier?: PermissionTier } = {},
): PermissionRequest {
  nextCallId++;
  return {
    toolCallId: `call_${nextCallId}`,
    toolName: tool.name,
    requestedName: options.requestedName ?? tool.name,
    args: {},
    tool,
    assistantMessage: assistant,
    tier: options.tier ?? tool.policy?.permission ?? 'full-access',
    subjects,
  };
}

/** An approver that records what it was asked and answers from a list (then `deny`). */
export function scriptedApprover(answers: ApprovalDecision[]): {
  approver: PermissionApprover;
  asked: string[];
  contexts: ApprovalContext[];
} {
  const asked: string[] = [];
  const contexts: ApprovalContext[] = [];
  return {
    asked,
    contexts,
    approver: (request, context) => {
      asked.push(`${request.toolName}:${request.subjects.join('|')}`);
      contexts.push(context);
      return answers.shift() ?? 'deny';
    },
  };
}

/** An agent whose permission gate is `policy`'s. */
export function agentUnder(steps: ScriptedStep[], tools: AnyAgentTool[], policy: PermissionPolicy) {
  return agentWith(steps, tools, { permissionGate: policy.gate });
}
