import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  claudeCodeNamesOf,
  claudeCodeRule,
  claudeCodeToolsWithCounterpart,
  claudeCodeToolsWithoutCounterpart,
} from './claude-code-names.js';
import { defineTool } from './define-tool.js';
import { AgentError } from './errors.js';
import { type PermissionMode, PermissionPolicy, type PermissionQuery } from './permissions.js';
import type { AnyAgentTool, PermissionTier, ToolPathAccess } from './tool.js';

// Claude Code's rules as a user coming from it writes them: each maps to ours, or is refused
// with a message naming the rule. Never accepted and left to match nothing.

describe('claudeCodeRule: the table', () => {
  it.each<[string, 'allow' | 'ask' | 'deny', string[] | undefined]>([
    // Not Claude Code's: our own syntax is left alone.
    ['bash(git *)', 'allow', undefined],
    ['read_file(/etc/*)', 'deny', undefined],
    ['@mcp:github', 'allow', undefined],
    // Bash: the prefix form, on a word boundary to allow and as a plain prefix to deny.
    ['Bash', 'allow', ['bash']],
    ['Bash(*)', 'allow', ['bash']],
    ['Bash(touch:*)', 'allow', ['bash(touch *)']],
    ['Bash(npm run test:*)', 'allow', ['bash(npm run test *)']],
    ['Bash(rm:*)', 'deny', ['bash(rm*)']],
    ['Bash(rm:*)', 'ask', ['bash(rm*)']],
    ['Bash(git diff)', 'allow', ['bash(git diff)']],
    ['Bash(npm * --save)', 'allow', ['bash(npm * --save)']],
    ['bash(git:*)', 'allow', ['bash(git *)']],
    ['bash(git:*)', 'deny', ['bash(git*)']],
    // Paths: Claude Code's anchors.
    ['Read', 'allow', ['read_file(*)']],
    ['Read(*)', 'deny', ['read_file(*)']],
    ['Read(//etc/passwd)', 'deny', ['read_file(/etc/passwd)']],
    ['Read(./.env)', 'deny', ['read_file(./.env)']],
    ['Read(.env)', 'deny', ['read_file(.env)']],
    ['Read(*.env)', 'deny', ['read_file(*.env)']],
    ['Read(/src/**)', 'allow', ['read_file(./src/*)']],
    ['Read(/secrets/**)', 'deny', ['read_file(./secrets/*)', 'read_file(/secrets/*)']],
    ['Read(~/.ssh/**)', 'deny', ['read_file(/home/me/.ssh/*)']],
    ['Edit(src/**/*.ts)', 'allow', ['edit_file(src/*.ts)', 'edit_file(src/*/*.ts)']],
    ['Edit(src/**/*.ts)', 'deny', ['edit_file(src/*.ts)']],
    ['Edit(docs/)', 'allow', ['edit_file(docs)', 'edit_file(docs/*)']],
    ['Write(/out/**)', 'allow', ['write_file(./out/*)']],
    ['MultiEdit', 'allow', ['edit_file(*)']],
    ['NotebookEdit(*.ipynb)', 'allow', ['notebook_edit(*.ipynb)']],
    ['Grep', 'allow', ['search(*)']],
    ['Glob', 'allow', ['glob(*)']],
    ['LS', 'allow', ['list_files(*)']],
    // WebFetch: domains.
    [
      'WebFetch(domain:example.com)',
      'allow',
      ['web_fetch(https://example.com/*)', 'web_fetch(http://example.com/*)'],
    ],
    [
      'WebFetch(domain:Example.COM)',
      'deny',
      ['web_fetch(http*://example.com/*)', 'web_fetch(http*://example.com:*)'],
    ],
    [
      'WebFetch(domain:*.evil.com)',
      'deny',
      ['web_fetch(http*://*.evil.com/*)', 'web_fetch(http*://*.evil.com:*)'],
    ],
    ['WebFetch', 'allow', ['web_fetch']],
    ['WebSearch', 'allow', ['web_search']],
    ['TodoWrite', 'allow', ['todo_write']],
    ['BashOutput', 'allow', ['bash_output']],
    ['KillShell', 'allow', ['bash_output']],
    ['Task', 'allow', ['@subagent']],
    ['Task(reviewer)', 'allow', ['@subagent/reviewer']],
    ['Skill(pdf)', 'allow', ['skill(pdf)']],
    ['ExitPlanMode', 'allow', ['exit_plan_mode']],
    // MCP.
    ['mcp__github', 'allow', ['@mcp:github']],
    ['mcp__github__*', 'allow', ['@mcp:github']],
    ['mcp__*', 'ask', ['@mcp:*']],
    ['mcp__github__create_issue', 'allow', ['@mcp:github(github/create_issue)']],
    ['mcp__my_server__get__thing', 'deny', ['@mcp:my_server(my_server/get__thing)']],
  ])('%s in %s → %j', (rule, kind, ours) => {
    expect(claudeCodeRule(rule, kind, { homeDirectory: '/home/me' })).toEqual(ours);
  });

  it.each([
    ['EnterPlanMode', /Claude Code's EnterPlanMode has no counterpart/],
    ['SlashCommand(/deploy)', /SlashCommand has no counterpart/],
    ['AskUserQuestion', /no counterpart/],
    ['WebFetch(https://example.com)', /WebFetch takes domain:<host>/],
    ['WebFetch(domain:exa mple.com)', /is not a host name/],
    ['WebFetch(domain:*.example.com)', /wildcard domain cannot be allowed/],
    ['TodoWrite(x)', /TodoWrite takes no specifier/],
    ['WebSearch(cats)', /WebSearch takes no specifier/],
    ['mcp__github__create_issue(x)', /an MCP tool takes no specifier/],
    ['mcp__', /expected mcp__<server>/],
    ['mcp____tool', /expected mcp__<server>/],
    ['Task(not a name)', /is not a sub-agent name/],
  ])('refuses %s, naming the rule', (rule, why) => {
    let error: unknown;
    try {
      claudeCodeRule(rule, 'allow');
    } catch (caught) {
      error = caught;
    }
    expect(AgentError.isInstance(error)).toBe(true);
    expect(String((error as Error).message)).toContain(
      `Invalid permission rule "${rule}" in allow`,
    );
    expect(String((error as Error).message)).toMatch(why);
  });

  it('every Claude Code tool name either maps or is refused (property over rule strings)', () => {
    const names = fc.constantFrom(
      ...claudeCodeToolsWithCounterpart,
      ...claudeCodeToolsWithoutCounterpart,
    );
    const specifier = fc.oneof(
      fc.constant(undefined),
      fc.constant('*'),
      fc.string({ maxLength: 12 }).filter((text) => !text.includes(')')),
      fc.constantFrom('npm run:*', '//etc/x', '~/x', '/x/**', 'domain:a.com', 'src/**/*.ts'),
    );
    fc.assert(
      fc.property(names, specifier, fc.constantFrom('allow', 'ask', 'deny'), (name, spec, kind) => {
        const rule = spec === undefined ? name : `${name}(${spec})`;
        let ours: string[] | undefined;
        try {
          ours = claudeCodeRule(rule, kind as 'allow');
        } catch (error) {
          expect(AgentError.isInstance(error)).toBe(true);
          expect((error as Error).message).toContain(`"${rule}"`);
          return;
        }
        // Mapped: never left as Claude Code's own name, and every rule parses as ours.
        expect(ours).toBeDefined();
        for (const text of ours ?? []) {
          expect(text.startsWith(name), text).toBe(false);
        }
        try {
          new PermissionPolicy({ [kind]: [rule], workspaceRoot: '/w' });
        } catch (error) {
          // Only our own parser's message about an empty or unclosed subject may remain.
          expect((error as Error).message).toMatch(/Invalid permission rule/);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('Claude Code rules in PermissionPolicy', () => {
  const tool = (
    name: string,
    access: ToolPathAccess | undefined,
    tier: PermissionTier,
    source = 'builtin',
  ) =>
    defineTool({
      name,
      source,
      description: name,
      input: z.object({ value: z.string() }),
      policy: { permission: tier, ...(access === undefined ? {} : { pathAccess: access }) },
      permissionSubjects: ({ value }) => [value],
      execute: async () => 'ok',
    }) as AnyAgentTool;
  const bash = tool('bash', undefined, 'full-access');
  const readFile = tool('read_file', 'read', 'read-only');
  const search = tool('search', 'read', 'read-only');
  const editFile = tool('edit_file', 'read-write', 'workspace-write');
  const writeFile = tool('write_file', 'write', 'workspace-write');
  const webFetch = tool('web_fetch', undefined, 'full-access');
  const mcpCreate = { ...tool('github__create_issue', undefined, 'full-access', 'mcp:github') };
  const tools = [bash, readFile, search, editFile, writeFile, webFetch, mcpCreate];

  function decide(
    options: { allow?: string[]; deny?: string[]; ask?: string[]; mode?: PermissionMode },
    target: AnyAgentTool,
    subject: string,
  ) {
    const policy = new PermissionPolicy({
      ...options,
      tools,
      workspaceRoot: '/w',
      homeDirectory: '/home/me',
    });
    const query: PermissionQuery = {
      toolName: target.name,
      tier: target.policy?.permission ?? 'full-access',
      subjects: [subject],
      tool: target,
    };
    return policy.evaluate(query);
  }

  it('Bash(touch:*) allows touch (and not touchy); a deny names the rule as written', () => {
    expect(decide({ allow: ['Bash(touch:*)'] }, bash, 'touch x.txt')).toMatchObject({
      behavior: 'allow',
      rules: ['Bash(touch:*)'],
    });
    expect(decide({ allow: ['Bash(touch:*)'] }, bash, 'touch')).toMatchObject({
      behavior: 'allow',
    });
    expect(decide({ allow: ['Bash(touch:*)'] }, bash, 'touchy x')).toMatchObject({
      behavior: 'ask',
    });
    expect(decide({ deny: ['Bash(rm:*)'], mode: 'full-access' }, bash, 'rmdir x')).toMatchObject({
      behavior: 'deny',
      reason: 'Denied by rule "Bash(rm:*)" for "rmdir x"',
    });
  });

  it('Read(…) covers every reader by real path; Edit(…) every writer', () => {
    expect(
      decide({ deny: ['Read(./.env)'], mode: 'full-access' }, search, '/w/.env'),
    ).toMatchObject({ behavior: 'deny' });
    expect(
      decide({ deny: ['Read(~/.ssh/**)'], mode: 'full-access' }, readFile, '/home/me/.ssh/id'),
    ).toMatchObject({ behavior: 'deny' });
    expect(
      decide({ deny: ['Read(//etc/**)'], mode: 'full-access' }, readFile, '/etc/passwd'),
    ).toMatchObject({ behavior: 'deny' });
    // `/x` is relative to the settings (the workspace) in Claude Code: a deny covers both readings.
    expect(
      decide({ deny: ['Read(/secrets/**)'], mode: 'full-access' }, readFile, '/secrets/a'),
    ).toMatchObject({ behavior: 'deny' });
    expect(
      decide({ deny: ['Read(/secrets/**)'], mode: 'full-access' }, readFile, '/w/secrets/a'),
    ).toMatchObject({ behavior: 'deny' });
    // … and an allow only the narrower one.
    expect(decide({ allow: ['Edit(/src/**)'] }, writeFile, '/w/src/a.ts')).toMatchObject({
      behavior: 'allow',
    });
    expect(decide({ allow: ['Edit(/src/**)'] }, writeFile, '/src/a.ts')).toMatchObject({
      behavior: 'ask',
    });
  });

  it('WebFetch(domain:…) and mcp__server__tool reach the right tools', () => {
    expect(
      decide({ allow: ['WebFetch(domain:example.com)'] }, webFetch, 'https://example.com/docs'),
    ).toMatchObject({ behavior: 'allow' });
    expect(
      decide({ allow: ['WebFetch(domain:example.com)'] }, webFetch, 'https://example.com.evil.io/'),
    ).toMatchObject({ behavior: 'ask' });
    expect(
      decide(
        { deny: ['WebFetch(domain:example.com)'], mode: 'full-access' },
        webFetch,
        'http://example.com:8080/x',
      ),
    ).toMatchObject({ behavior: 'deny' });
    expect(
      decide({ allow: ['mcp__github__create_issue'] }, mcpCreate, 'github/create_issue'),
    ).toMatchObject({ behavior: 'allow' });
    expect(
      decide({ deny: ['mcp__github'], mode: 'full-access' }, mcpCreate, 'github/create_issue'),
    ).toMatchObject({ behavior: 'deny' });
    expect(
      decide({ allow: ['mcp__gitlab__create_issue'] }, mcpCreate, 'github/create_issue'),
    ).toMatchObject({ behavior: 'ask' });
    // `mcp__*` is every MCP server's tools (`@mcp:*`), and nothing else.
    expect(
      decide({ deny: ['mcp__*'], mode: 'full-access' }, mcpCreate, 'github/create_issue'),
    ).toMatchObject({ behavior: 'deny' });
    expect(decide({ deny: ['mcp__*'], mode: 'full-access' }, bash, 'ls')).toMatchObject({
      behavior: 'allow',
    });
  });

  it('Read alone covers every reader, as in Claude Code; Edit alone every writer', () => {
    expect(decide({ deny: ['Read'], mode: 'full-access' }, search, '/w/a.ts')).toMatchObject({
      behavior: 'deny',
    });
    expect(decide({ allow: ['Edit'] }, writeFile, '/w/a.ts')).toMatchObject({
      behavior: 'allow',
    });
    expect(decide({ allow: ['Edit'] }, readFile, '/w/a.ts')).toMatchObject({ behavior: 'ask' });
  });

  it('an unmappable rule is refused when the policy is built', () => {
    expect(() => new PermissionPolicy({ allow: ['EnterPlanMode'] })).toThrow(
      /Invalid permission rule "EnterPlanMode" in allow: Claude Code's EnterPlanMode has no counterpart/,
    );
  });
});

describe('claudeCodeNamesOf (hook matchers)', () => {
  it.each<[Parameters<typeof claudeCodeNamesOf>[0], string[]]>([
    [{ name: 'bash' }, ['Bash']],
    [{ name: 'edit_file' }, ['Edit', 'MultiEdit']],
    [{ name: 'read_file' }, ['Read', 'NotebookRead']],
    [{ name: 'bash_output' }, ['BashOutput', 'KillShell', 'KillBash']],
    [{ name: 'reviewer', source: 'subagent' }, ['Task', 'Agent']],
    [{ name: 'github__create_issue', source: 'mcp:github' }, ['mcp__github__create_issue']],
    [{ name: 'create_issue', source: 'mcp:github' }, ['mcp__github__create_issue']],
    [{ name: 'my_tool' }, []],
  ])('%j → %j', (tool, names) => {
    expect(claudeCodeNamesOf(tool)).toEqual(names);
  });
});
