import * as fs from 'node:fs';
import * as path from 'node:path';
import { StaticToolExecutor, ToolError, type ToolResultMessage } from '@agent/core';
import { afterAll, describe, expect, it } from 'vitest';
import { BackgroundTasks } from './background-tasks.js';
import {
  type DefaultToolsOptions,
  defaultToolNames,
  defaultTools,
  kiroToolNames,
} from './default-tools.js';
import { makeTempDir } from './test-helpers.js';
import { type FileSystemOperations, nodeFileSystem } from './workspace.js';

// Kiro's tool names that reach the opt-in tools and todo_write's command shapes, called with the
// arguments of Kiro's own tests (crates/chat-cli tools and crates/agent task_tool_tests.json).

const sessions: BackgroundTasks[] = [];
afterAll(async () => {
  await Promise.all(sessions.map((session) => session.close()));
});

function setup(options: Partial<DefaultToolsOptions> = {}) {
  const root = makeTempDir();
  const backgroundTasks = new BackgroundTasks();
  sessions.push(backgroundTasks);
  const tools = defaultTools({
    cwd: root,
    backgroundTasks,
    tools: [...defaultToolNames, ...kiroToolNames],
    ...options,
    bash: { sandbox: 'off', ...options.bash },
  });
  const executor = new StaticToolExecutor();
  for (const tool of tools) executor.register(tool);
  const byName = (name: string) => {
    const tool = tools.find((candidate) => candidate.name === name);
    if (tool === undefined) throw new Error(`no tool ${name}`);
    return tool;
  };
  return { root, tools: executor, byName };
}

function text(result: ToolResultMessage): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(ToolError.isInstance(error)).toBe(true);
  return String(error);
}

describe('todo_list / task / todo (Kiro’s commands on todo_write)', () => {
  it('the newer task tool: create → complete → add → remove → complete all (Kiro’s full_workflow)', async () => {
    const { tools, byName } = setup();
    const todo = byName('todo_write') as unknown as {
      getTodos(): { id: string; content: string; status: string }[];
    };
    const created = await tools.execute('task', {
      command: 'create',
      task_list_description: 'Workflow',
      tasks: [
        { task_description: 'Step 1' },
        { task_description: 'Step 2', details: 'Implementation details for step 2' },
        { task_description: 'Step 3' },
      ],
    });
    expect(created).toContain('Task list list-2: Workflow');
    expect(todo.getTodos().map((item) => [item.id, item.content])).toEqual([
      ['1', 'Step 1'],
      ['2', 'Step 2 — Implementation details for step 2'],
      ['3', 'Step 3'],
    ]);
    const completed = await tools.execute('task', {
      command: 'complete',
      completed_task_ids: ['1'],
      context_update: 'Did 1',
      modified_files: ['src/main.rs'],
    });
    expect(completed).toContain('Recent context: Did 1');
    expect(completed).toContain('Modified files: src/main.rs');
    await tools.execute('task', {
      command: 'add',
      new_tasks: [{ task_description: 'Step 4' }, { task_description: 'Step 5' }],
      new_description: 'Updated workflow',
    });
    expect(todo.getTodos()).toHaveLength(5);
    const removed = await tools.execute('task', {
      command: 'remove',
      remove_task_ids: ['3', '5'],
      new_description: 'Revised workflow',
    });
    expect(removed).toContain('Revised workflow');
    expect(todo.getTodos().map((item) => [item.id, item.status])).toEqual([
      ['1', 'completed'],
      ['2', 'pending'],
      ['4', 'pending'],
    ]);
    const done = await tools.execute('todo', {
      command: 'complete',
      completed_task_ids: ['2', '4'],
      context_update: 'All done',
    });
    expect(done).toContain('the list is cleared');
    expect(todo.getTodos()).toEqual([]);
    expect(await tools.execute('task', { command: 'list' })).toContain('The task list is empty.');
  });

  it.each([
    [{ command: 'create', task_list_description: 'Plan', tasks: [] }, /at least one task/],
    [
      { command: 'create', task_list_description: 'Plan', tasks: [{ task_description: '  ' }] },
      /task description is empty/,
    ],
    [
      { command: 'create', task_list_description: '', tasks: [{ task_description: 'Task' }] },
      /description/,
    ],
    [{ command: 'complete', completed_task_ids: [], context_update: 'x' }, /at least one task id/],
    [
      { command: 'complete', completed_task_ids: ['1'], context_update: '  ' },
      /context_update is empty/,
    ],
    [{ command: 'complete', completed_task_ids: ['999'], context_update: 'x' }, /"999" not found/],
    [{ command: 'add', new_tasks: [] }, /at least one new task/],
    [{ command: 'add', new_tasks: [{ task_description: '  ' }] }, /task description is empty/],
    [
      { command: 'add', new_tasks: [{ task_description: 'B' }], new_description: '  ' },
      /new description is empty/,
    ],
    [{ command: 'remove', remove_task_ids: [] }, /at least one task id/],
    [{ command: 'remove', remove_task_ids: ['999'] }, /"999" not found/],
    [{ command: 'rename' }, /expected one of "create", "complete".*received "rename"/],
  ])('refuses %j as Kiro does, the list unchanged', async (args, message) => {
    const { tools, byName } = setup();
    await tools.execute('task', {
      command: 'create',
      task_list_description: 'Plan',
      tasks: [{ task_description: 'A' }],
    });
    const before = (byName('todo_write') as unknown as { getTodos(): unknown[] }).getTodos();
    expect(await refusal(tools.execute('task', args))).toMatch(message);
    expect((byName('todo_write') as unknown as { getTodos(): unknown[] }).getTodos()).toEqual(
      before,
    );
  });

  it('todo_list (chat-cli): string tasks, 0-based indices, current_id, load and lookup', async () => {
    const { tools, byName } = setup();
    const todo = byName('todo_write') as unknown as {
      getTodos(): { content: string; status: string }[];
    };
    const created = await tools.execute('todo_list', {
      command: 'create',
      tasks: ['Build the code', 'Bundle the artifacts', 'Sign the bundle'],
      todo_list_description: 'Prepare the release',
    });
    const id = /Task list (list-\d+)/.exec(created)?.[1] ?? '';
    expect(id).not.toBe('');
    await tools.execute('todo_list', {
      command: 'complete',
      completed_indices: [0],
      context_update: 'Built with cargo build --release',
      modified_files: null,
      current_id: id,
    });
    await tools.execute('todo_list', {
      command: 'add',
      new_tasks: [{ task_description: 'Run the tests' }],
      insert_indices: [1],
      current_id: id,
    });
    expect(todo.getTodos().map((item) => item.content)).toEqual([
      'Build the code',
      'Run the tests',
      'Bundle the artifacts',
      'Sign the bundle',
    ]);
    await tools.execute('todo_list', { command: 'remove', remove_indices: [3], current_id: id });
    expect(todo.getTodos().map((item) => item.status)).toEqual(['completed', 'pending', 'pending']);
    expect(await tools.execute('todo_list', { command: 'lookup' })).toContain(id);
    expect(await tools.execute('todo_list', { command: 'load', load_id: id })).toContain(
      'Run the tests',
    );
    expect(
      await refusal(tools.execute('todo_list', { command: 'load', load_id: 'list-99' })),
    ).toMatch(`its id is "${id}"`);
    expect(
      await refusal(
        tools.execute('todo_list', {
          command: 'complete',
          completed_indices: [7],
          context_update: 'x',
          current_id: id,
        }),
      ),
    ).toMatch(/position 7 is out of range/);
    expect(
      await refusal(
        tools.execute('todo_list', { command: 'remove', remove_indices: [0], current_id: 'old' }),
      ),
    ).toMatch(`current_id "old" is not the current list`);
  });

  it('todo_write’s own whole-list shape is unchanged', async () => {
    const { tools } = setup();
    const out = await tools.execute('todo_write', {
      todos: [{ id: 'a', content: 'Plain', status: 'pending' }],
    });
    expect(out).toContain('[ ] Plain (id a)');
  });
});

describe('thinking → think', () => {
  it('records Kiro’s example thought and changes nothing', async () => {
    const thoughts: string[] = [];
    const { tools, root } = setup({ think: { onThought: (thought) => thoughts.push(thought) } });
    const thought =
      'The user needs to prepare their application for production. I need to complete three major asks including 1: building their code from source, 2: bundling their release artifacts together, and 3: signing the application bundle.';
    const result = await tools.executeResult('thinking', { thought });
    expect(result).toMatchObject({ toolName: 'think', isError: false, details: { thought } });
    expect(text(result)).toBe('Thought recorded.');
    expect(thoughts).toEqual([thought]);
    expect(fs.readdirSync(root)).toEqual([]);
    expect((await tools.executeResult('thinking', { thought: '  ' })).isError).toBe(true);
  });
});

describe('report_issue / gh_issue', () => {
  it('drafts Kiro’s issue shape with the host’s context and a GitHub link; nothing is sent', async () => {
    const drafts: unknown[] = [];
    const { tools } = setup({
      reportIssue: {
        repository: 'example/agent',
        context: () => ({ version: '1.2.3', model: 'test-model' }),
        onDraft: (draft) => drafts.push(draft),
      },
    });
    const result = await tools.executeResult('report_issue', {
      title: 'Chat hangs after tool call',
      expected_behavior: 'The answer streams after the tool result.',
      actual_behavior: 'Nothing happens for minutes.',
      steps_to_reproduce: 'Ask to list files, then ask to read one.',
    });
    expect(result.isError).toBe(false);
    const out = text(result);
    expect(out).toContain('Issue drafted (not submitted)');
    expect(out).toContain('## Expected behaviour\n\nThe answer streams after the tool result.');
    expect(out).toContain('- version: 1.2.3');
    const url = new URL(/File it here: (\S+)/.exec(out)?.[1] ?? '');
    expect(url.origin + url.pathname).toBe('https://github.com/example/agent/issues/new');
    expect(url.searchParams.get('title')).toBe('Chat hangs after tool call');
    expect(url.searchParams.get('body')).toContain('Nothing happens for minutes.');
    expect(drafts).toHaveLength(1);
    // Kiro's code name reaches it too; only the title is required.
    const titleOnly = await tools.execute('gh_issue', { title: 'Feature: dark mode' });
    expect(titleOnly).toContain('# Feature: dark mode\n\n## Environment');
    expect(titleOnly).not.toContain('## Expected behaviour');
  });

  it('keeps the link usable when the body is huge', async () => {
    const { tools } = setup({ reportIssue: { repository: 'example/agent' } });
    const out = await tools.execute('report_issue', {
      title: 'Long',
      actual_behavior: 'x'.repeat(50_000),
    });
    const url = /File it here: (\S+)/.exec(out)?.[1] ?? '';
    expect(url.length).toBeLessThanOrEqual(8000);
    expect(decodeURIComponent(url.replaceAll('+', ' '))).toContain(
      '(shortened: paste the full draft)',
    );
  });
});

describe('use_aws / aws through bash', () => {
  function fakeAws(): string {
    const bin = makeTempDir('fake-aws-');
    // A stand-in for the AWS CLI (which cannot reach AWS here): prints each argument it got.
    fs.writeFileSync(
      path.join(bin, 'aws'),
      '#!/bin/sh\nfor a in "$@"; do printf "<%s>\\n" "$a"; done\n',
      {
        mode: 0o755,
      },
    );
    return bin;
  }

  it('runs Kiro’s example call as one aws command line, parameters in kebab case', async () => {
    const bin = fakeAws();
    const env = { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` };
    const { tools, byName } = setup({ bash: { env } });
    const args = {
      service_name: 's3api',
      operation_name: 'put-object',
      parameters: {
        TableName: 'table-name',
        KeyConditionExpression: 'PartitionKey = :pkValue',
        'dry-run': '',
        Tags: { Key: 'team', Value: "o'brien" },
      },
      region: 'us-west-2',
      profile_name: 'default',
      label: '',
    };
    const out = await tools.execute('use_aws', args);
    expect(out.match(/<[^>]*>/g)).toEqual([
      '<s3api>',
      '<put-object>',
      '<--table-name>',
      '<table-name>',
      '<--key-condition-expression>',
      '<PartitionKey = :pkValue>',
      '<--dry-run>',
      '<--tags>',
      `<{"Key":"team","Value":"o'brien"}>`,
      '<--region>',
      '<us-west-2>',
      '<--profile>',
      '<default>',
    ]);
    // Rules on use_aws see the aws command line, service and operation first.
    const subjects = await byName('use_aws').permissionSubjects?.(args);
    expect(JSON.stringify(subjects)).toMatch(/^\["aws s3api put-object /);
  });

  it('aws (the newer name) with positional_args for s3 cp', async () => {
    const bin = fakeAws();
    const env = { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` };
    const { tools } = setup({ bash: { env } });
    const out = await tools.execute('aws', {
      service_name: 's3',
      operation_name: 'cp',
      positional_args: ['./local file.txt', 's3://bucket/key'],
      region: 'eu-west-1',
      label: 'Upload',
    });
    expect(out.match(/<[^>]*>/g)).toEqual([
      '<s3>',
      '<cp>',
      '<./local file.txt>',
      '<s3://bucket/key>',
      '<--region>',
      '<eu-west-1>',
    ]);
  });

  it('says the AWS CLI is missing when no aws is on the PATH, and runs nothing', async () => {
    const empty = makeTempDir('no-aws-');
    const { tools } = setup({ bash: { env: { ...process.env, PATH: empty } } });
    const result = await tools.executeResult('use_aws', {
      service_name: 's3api',
      operation_name: 'list-buckets',
      region: 'us-west-2',
      label: 'List buckets',
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/AWS CLI is not installed: no executable "aws" on the PATH/);
  });

  it.each([
    { service_name: '--endpoint-url', operation_name: 'x', region: 'us-west-2', label: '' },
    { service_name: 's3api', operation_name: 'list-buckets;id', region: 'us-west-2', label: '' },
    { service_name: 's3api', operation_name: 'ls', region: '$(id)', label: '' },
    {
      service_name: 's3api',
      operation_name: 'ls',
      region: 'us-west-2',
      label: '',
      parameters: { 'a b;c': '1' },
    },
    { service_name: 's3api', operation_name: 'ls', label: '' },
  ])('refuses %j before running anything', async (args) => {
    const bin = fakeAws();
    const { tools } = setup({ bash: { env: { ...process.env, PATH: bin } } });
    const result = await tools.executeResult('use_aws', args);
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/Invalid arguments/);
  });
});

describe('knowledge', () => {
  it('add (text and a directory), show, search, update, remove, clear — Kiro’s commands', async () => {
    const { tools, root } = setup();
    fs.mkdirSync(path.join(root, 'docs'));
    fs.writeFileSync(
      path.join(root, 'docs', 'deploy.md'),
      'How to deploy\n\nRun the release pipeline, then tag the build.\n',
    );
    fs.writeFileSync(
      path.join(root, 'docs', 'style.md'),
      'Style guide\n\nUse whole words in names.\n',
    );
    fs.writeFileSync(path.join(root, 'docs', 'logo.bin'), Buffer.from([0, 1, 2, 3]));
    expect(await tools.execute('knowledge', { command: 'show' })).toBe(
      'The knowledge base is empty.',
    );
    expect(
      await tools.execute('knowledge', {
        command: 'add',
        name: 'notes',
        value: 'The staging database is db-7 in eu-west-1.',
      }),
    ).toMatch(/Added kb-1 "notes": text, 1 passages/);
    expect(
      await tools.execute('knowledge', { command: 'add', name: 'project docs', value: 'docs' }),
    ).toMatch(/Added kb-2 "project docs": 2 files from docs/);
    const found = await tools.execute('knowledge', {
      command: 'search',
      query: 'release pipeline',
    });
    expect(found).toContain('project docs (kb-2) docs/deploy.md:1');
    expect(found).not.toContain('style.md');
    expect(
      await tools.execute('knowledge', {
        command: 'search',
        query: 'staging database',
        context_id: 'kb-1',
      }),
    ).toContain('db-7');
    expect(
      await tools.execute('knowledge', {
        command: 'search',
        query: 'words',
        file_type: 'md',
        limit: 1,
      }),
    ).toContain('style.md');
    fs.writeFileSync(path.join(root, 'docs', 'deploy.md'), 'Deploys now use canary releases.\n');
    expect(
      await tools.execute('knowledge', { command: 'update', path: 'docs', context_id: 'kb-2' }),
    ).toMatch(/2 files/);
    expect(await tools.execute('knowledge', { command: 'search', query: 'canary' })).toContain(
      'canary',
    );
    expect(await tools.execute('knowledge', { command: 'status' })).toContain(
      'No background operations',
    );
    expect(
      await tools.execute('knowledge', { command: 'cancel', operation_id: 'abcd1234' }),
    ).toContain('No background operations');
    expect(await tools.execute('knowledge', { command: 'remove', name: 'notes' })).toContain(
      'Removed kb-1',
    );
    expect(await tools.execute('knowledge', { command: 'show' })).not.toContain('notes');
    expect(await tools.execute('knowledge', { command: 'clear' })).toBe('Removed all 1 contexts.');
  });

  it('refuses a path outside the workspace instead of storing it as text', async () => {
    const { tools } = setup();
    const outside = makeTempDir('outside-');
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret');
    const result = await tools.executeResult('knowledge', {
      command: 'add',
      name: 'x',
      value: path.join(outside, 'secret.txt'),
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/outside the workspace/);
  });

  it.each(['the file', 'a folder above it'])(
    '%s swapped for a link to outside between the walk and the read: not indexed',
    async (which) => {
      const outside = makeTempDir('outside-');
      fs.mkdirSync(path.join(outside, 'docs'));
      fs.writeFileSync(path.join(outside, 'secret.md'), 'canary secret token\n');
      fs.writeFileSync(path.join(outside, 'docs', 'swap-me.md'), 'canary secret token\n');
      let swapped = false;
      // What a background command looping `ln -sf` does, at the worst moment: after the walk saw a
      // regular file, before it is opened.
      const swapping: FileSystemOperations = {
        ...nodeFileSystem,
        open: (async (where: fs.PathLike, flags?: string | number, mode?: fs.Mode) => {
          const name = String(where);
          if (!swapped && name.endsWith(`${path.sep}swap-me.md`)) {
            swapped = true;
            if (which === 'the file') {
              fs.rmSync(name);
              fs.symlinkSync(path.join(outside, 'secret.md'), name);
            } else {
              const folder = path.dirname(name);
              fs.renameSync(folder, `${folder}-gone`);
              fs.symlinkSync(path.join(outside, 'docs'), folder);
            }
          }
          return nodeFileSystem.open(where, flags, mode);
        }) as FileSystemOperations['open'],
      };
      const { tools, root } = setup({ fs: swapping });
      fs.mkdirSync(path.join(root, 'docs'));
      fs.writeFileSync(path.join(root, 'docs', 'other.md'), 'canary other words\n');
      fs.writeFileSync(path.join(root, 'docs', 'swap-me.md'), 'harmless words\n');
      await tools.execute('knowledge', { command: 'add', name: 'docs', value: 'docs' });
      expect(swapped).toBe(true);
      const found = await tools.execute('knowledge', { command: 'search', query: 'canary' });
      // Before: the outside file's "canary secret token" was indexed and shown.
      expect(found).not.toContain('secret');
      expect(found).toContain('other');
    },
  );

  it.each([
    [{ command: 'add', name: 'x' }, /add needs "value"/],
    [{ command: 'search' }, /search needs "query"/],
    [{ command: 'remove' }, /remove needs "name", "context_id" or "path"/],
    [{ command: 'remove', context_id: 'kb-9' }, /no context matches/],
    [{ command: 'forget' }, /expected one of/],
  ])('refuses %j', async (args, message) => {
    const { tools } = setup();
    expect(await refusal(tools.execute('knowledge', args))).toMatch(message);
  });
});

describe('glob / grep with Kiro’s newer fields', () => {
  function tree() {
    const context = setup();
    for (const file of ['a.rs', 'src/b.rs', 'src/deep/c.rs', 'src/deep/deeper/d.rs'])
      fs.mkdirSync(path.dirname(path.join(context.root, file)), { recursive: true });
    for (const file of ['a.rs', 'src/b.rs', 'src/deep/c.rs', 'src/deep/deeper/d.rs'])
      fs.writeFileSync(path.join(context.root, file), 'fn main() {}\n// TODO one\n// TODO two\n');
    return context;
  }

  it('glob {pattern, path, limit, max_depth}: max_depth counts levels below path', async () => {
    const { tools, root } = tree();
    const at = (depth: number) =>
      tools.execute('glob', { pattern: '**/*.rs', path: root, max_depth: depth });
    expect((await at(1)).split('\n')).toEqual(['a.rs']);
    expect((await at(2)).split('\n').sort()).toEqual(['a.rs', 'src/b.rs']);
    // The walk starts below the pattern's literal prefix (src/); the depth still counts from path.
    expect(await tools.execute('glob', { pattern: 'src/**/*.rs', path: root, max_depth: 1 })).toBe(
      'No files found.',
    );
    expect(await tools.execute('glob', { pattern: 'src/**/*.rs', path: root, max_depth: 2 })).toBe(
      'src/b.rs',
    );
    expect(
      (await tools.execute('glob', { pattern: '**/*.rs', limit: 5 })).split('\n'),
    ).toHaveLength(4);
  });

  it('grep {pattern, path, include, case_sensitive, output_mode, max_total_lines | max_files}', async () => {
    const { tools, root } = tree();
    const lines = await tools.execute('grep', {
      pattern: 'todo',
      path: root,
      include: '*.rs',
      case_sensitive: false,
      output_mode: 'content',
      max_total_lines: 3,
    });
    expect(lines.split('\n').filter((line) => line.includes('TODO'))).toHaveLength(3);
    const files = await tools.execute('grep', {
      pattern: 'TODO',
      output_mode: 'files_with_matches',
      max_files: 2,
    });
    expect(files.split('\n').filter((line) => line.endsWith('.rs'))).toHaveLength(2);
    // A cap that does not fit the mode, and the caps we have no counterpart for, are refused.
    for (const extra of [{ max_files: 2 }, { max_matches_per_file: 1 }, { max_depth: 1 }]) {
      const result = await tools.executeResult('grep', { pattern: 'TODO', ...extra });
      expect(result.isError).toBe(true);
      expect(text(result)).toContain(`unknown field "${Object.keys(extra)[0]}"`);
    }
  });
});
