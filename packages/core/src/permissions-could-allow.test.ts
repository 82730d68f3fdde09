import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineTool } from './define-tool.js';
import { type PermissionGrant, type PermissionMode, PermissionPolicy } from './permissions.js';
import type { AnyAgentTool, PermissionTier } from './tool.js';

// `couldAllow` hides, from a session that cannot ask, the tools it would only ever refuse. It must
// never hide a tool some call of which `evaluate` allows (checked over random policies below), and
// it must hide the ones no rule, grant or mode reaches (the table).

const bash = defineTool({
  name: 'bash',
  aliases: ['shell'],
  source: 'builtin',
  description: 'runs a command line',
  input: z.object({ command: z.string() }),
  permissionSubjects: ({ command }) => [command],
  execute: async ({ command }) => `ran: ${command}`,
});
const readFile = defineTool({
  name: 'read_file',
  source: 'builtin',
  description: 'reads a file',
  input: z.object({ path: z.string() }),
  policy: { permission: 'read-only' },
  permissionSubjects: ({ path }) => [path],
  execute: async ({ path }) => `read ${path}`,
});
const writeFile = defineTool({
  name: 'write_file',
  source: 'builtin',
  description: 'writes a file',
  input: z.object({ path: z.string() }),
  policy: { permission: 'workspace-write' },
  permissionSubjects: ({ path }) => [path],
  execute: async ({ path }) => `wrote ${path}`,
});
// No permissionSubjects: every call has zero subjects.
const sendMessage = defineTool({
  name: 'send_user_message',
  source: 'builtin',
  description: 'sends a message',
  input: z.object({ text: z.string() }),
  execute: async () => 'sent',
});
const tools = [bash, readFile, writeFile, sendMessage];

function allowed(options: ConstructorParameters<typeof PermissionPolicy>[0]): string[] {
  const policy = new PermissionPolicy(options);
  return tools.filter((tool) => policy.couldAllow(tool)).map((tool) => tool.name);
}

describe('PermissionPolicy.couldAllow', () => {
  it.each<[string, ConstructorParameters<typeof PermissionPolicy>[0], string[]]>([
    ['read-only: the read-only tools only', { mode: 'read-only' }, ['read_file']],
    ['default: nothing', { mode: 'default' }, []],
    ['workspace-write', { mode: 'workspace-write' }, ['read_file', 'write_file']],
    ['full-access: every tool', { mode: 'full-access' }, tools.map((tool) => tool.name)],
    [
      'an allow rule with a subject keeps its tool',
      { mode: 'read-only', allow: ['bash(git *)'] },
      ['bash', 'read_file'],
    ],
    [
      'an allow rule by source keeps the source',
      { mode: 'default', allow: ['@builtin'] },
      tools.map((tool) => tool.name),
    ],
    [
      'an allow rule with a subject cannot reach a tool whose calls have none',
      { mode: 'read-only', allow: ['send_user_message(*)'] },
      ['read_file'],
    ],
    [
      'a bare allow rule reaches it',
      { mode: 'read-only', allow: ['send_user_message'] },
      ['read_file', 'send_user_message'],
    ],
    [
      'a bare deny rule beats the mode',
      { mode: 'full-access', deny: ['bash'] },
      ['read_file', 'write_file', 'send_user_message'],
    ],
    [
      'a deny rule by alias beats an allow rule',
      { mode: 'read-only', allow: ['bash'], deny: ['shell'] },
      ['read_file'],
    ],
    [
      'a bare ask rule can never be answered without an approver',
      { mode: 'full-access', ask: ['write_file', 'send_user_message'] },
      ['bash', 'read_file'],
    ],
    [
      'deny and ask rules with a subject leave other calls',
      { mode: 'full-access', deny: ['bash(rm *)'], ask: ['write_file(/etc/*)'] },
      tools.map((tool) => tool.name),
    ],
    [
      'a disabled tool',
      { mode: 'full-access', disabledTools: ['bash', 'send_*'] },
      ['read_file', 'write_file'],
    ],
    [
      'an "always" grant keeps its tool',
      {
        mode: 'read-only',
        grants: [
          { tool: 'write_file', subject: 'notes.txt', decision: 'allow' },
          { tool: 'send_user_message', decision: 'allow' },
        ],
      },
      ['read_file', 'write_file', 'send_user_message'],
    ],
    [
      'a "never" grant without a subject shuts a tool whose calls have none',
      { mode: 'full-access', grants: [{ tool: 'send_user_message', decision: 'deny' }] },
      ['bash', 'read_file', 'write_file'],
    ],
  ])('%s', (_name, options, expected) => {
    expect(allowed(options)).toEqual(expected);
  });

  it('follows setMode', () => {
    const policy = new PermissionPolicy({ mode: 'read-only' });
    expect(policy.couldAllow(writeFile)).toBe(false);
    policy.setMode('workspace-write');
    expect(policy.couldAllow(writeFile)).toBe(true);
  });
});

const words = ['rm', 'git', 'echo'];
const subjectArb = fc
  .tuple(fc.constantFrom(...words), fc.constantFrom('', ' x', ' push'))
  .map(([name, rest]) => `${name}${rest}`);
const toolPatternArb = fc.constantFrom('bash', 'shell', 'send_user_message', '@builtin', 'b*', '*');
const ruleArb = fc.oneof(
  toolPatternArb,
  fc
    .tuple(toolPatternArb, fc.oneof(subjectArb, fc.constant('*'), fc.constant('git *')))
    .map(([tool, subject]) => `${tool}(${subject})`),
);

describe('PermissionPolicy.couldAllow (property)', () => {
  it('is never false for a tool some call of which evaluate allows', () => {
    fc.assert(
      fc.property(
        fc.record({
          allow: fc.array(ruleArb, { maxLength: 3 }),
          ask: fc.array(ruleArb, { maxLength: 2 }),
          deny: fc.array(ruleArb, { maxLength: 2 }),
          disabledTools: fc.array(toolPatternArb, { maxLength: 1 }),
          mode: fc.constantFrom<PermissionMode>(
            'default',
            'read-only',
            'workspace-write',
            'full-access',
          ),
          tier: fc.constantFrom<PermissionTier>('read-only', 'workspace-write', 'full-access'),
          grants: fc.array(
            fc.record({
              tool: fc.constantFrom('bash', 'send_user_message'),
              subject: fc.option(subjectArb, { nil: undefined }),
              decision: fc.constantFrom<'allow' | 'deny'>('allow', 'deny'),
            }),
            { maxLength: 3 },
          ),
          subjects: fc.array(subjectArb, { maxLength: 3 }),
          withSubjects: fc.boolean(),
        }),
        (input) => {
          const grants: PermissionGrant[] = input.grants.map(({ subject, ...grant }) =>
            subject === undefined ? grant : { ...grant, subject },
          );
          const policy = new PermissionPolicy({ ...input, grants });
          const tool: AnyAgentTool = {
            ...(input.withSubjects ? bash : sendMessage),
            policy: { permission: input.tier },
          };
          // A tool without permissionSubjects only ever makes calls without subjects.
          const subjects = input.withSubjects ? input.subjects : [];
          const outcome = policy.evaluate({
            toolName: tool.name,
            tier: input.tier,
            subjects,
            tool,
          });
          if (outcome.behavior === 'allow') expect(policy.couldAllow(tool)).toBe(true);
          // Exact for a tool whose calls have no subjects.
          if (!input.withSubjects)
            expect(policy.couldAllow(tool)).toBe(outcome.behavior === 'allow');
        },
      ),
      { numRuns: 3000 },
    );
  });
});
