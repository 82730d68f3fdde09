import * as fs from 'node:fs';
import * as path from 'node:path';
import { StaticToolExecutor, ToolError } from '@agent/core';
import { afterAll, describe, expect, it } from 'vitest';
import { BackgroundTasks } from './background-tasks.js';
import { defaultTools } from './default-tools.js';
import { makeTempDir } from './test-helpers.js';

// claw-code's tool table (rust/crates/tools mvp_tool_specs), each tool called by claw's wire name
// with the arguments of claw's own tests, through the loop's path (StaticToolExecutor →
// executeTool: alias → prepareArguments → validation → execute).

const sessions: BackgroundTasks[] = [];
afterAll(async () => {
  await Promise.all(sessions.map((session) => session.close()));
});

function workspace() {
  const cwd = makeTempDir();
  const backgroundTasks = new BackgroundTasks();
  sessions.push(backgroundTasks);
  const tools = new StaticToolExecutor();
  for (const tool of defaultTools({ cwd, backgroundTasks, bash: { sandbox: 'off' } }))
    tools.register(tool);
  return { cwd, tools };
}

async function failure(promise: Promise<unknown>): Promise<ToolError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!ToolError.isInstance(error)) throw new Error(`expected a ToolError, got ${String(error)}`);
  return error;
}

describe('claw-code’s file and shell tools', () => {
  it('bash {command, timeout}; claw’s per-call sandbox fields are dropped, never obeyed', async () => {
    const { tools } = workspace();
    const out = await tools.execute('bash', { command: "printf 'targeted ok'", timeout: 10_000 });
    expect(out).toContain('targeted ok');
    const asked = await tools.execute('bash', {
      command: "printf 'still ran'",
      description: 'Print',
      namespaceRestrictions: false,
      isolateNetwork: false,
      filesystemMode: 'off',
      allowedMounts: ['/'],
    });
    expect(asked).toContain('still ran');
  });

  it('write_file, read_file {path, offset, limit}, edit_file {…, replace_all}', async () => {
    const { cwd, tools } = workspace();
    await tools.execute('write_file', { path: 'nested/demo.txt', content: 'alpha\nbeta\nalpha\n' });
    expect(fs.readFileSync(path.join(cwd, 'nested/demo.txt'), 'utf8')).toBe('alpha\nbeta\nalpha\n');
    // claw's offset is 0-based ("offset 1" = line 2); ours, like Claude Code's Read, is 1-based.
    expect(
      await tools.execute('read_file', { path: 'nested/demo.txt', offset: 2, limit: 1 }),
    ).toMatch(/^\s*2\tbeta/);
    await tools.execute('edit_file', {
      path: 'nested/demo.txt',
      old_string: 'alpha',
      new_string: 'omega',
      replace_all: true,
    });
    expect(fs.readFileSync(path.join(cwd, 'nested/demo.txt'), 'utf8')).toBe('omega\nbeta\nomega\n');
    const missing = await failure(
      tools.execute('edit_file', {
        path: 'nested/demo.txt',
        old_string: 'missing',
        new_string: 'omega',
      }),
    );
    expect(missing.message).toMatch(/not found|does not occur|no match/i);
  });

  it('glob_search {pattern} and grep_search with grep’s flags', async () => {
    const { cwd, tools } = workspace();
    fs.mkdirSync(path.join(cwd, 'nested'));
    fs.writeFileSync(
      path.join(cwd, 'nested/lib.rs'),
      'fn main() {\n  let alpha = 1;\n  let ALPHA = 2;\n}\n',
    );
    fs.writeFileSync(path.join(cwd, 'nested/notes.txt'), 'alpha\nbeta\n');
    expect(await tools.execute('glob_search', { pattern: 'nested/*.rs' })).toContain(
      'nested/lib.rs',
    );
    const content = await tools.execute('grep_search', {
      pattern: 'alpha',
      path: 'nested',
      glob: '*.rs',
      output_mode: 'content',
      '-n': true,
      '-i': true,
      head_limit: 1,
      offset: 1,
    });
    // Case-insensitive (both lines match), .rs only, the second entry of the page.
    expect(content).toContain('let ALPHA = 2;');
    expect(content).not.toContain('notes.txt');
    expect(content).not.toContain('let alpha = 1;');
    const count = await tools.execute('grep_search', {
      pattern: 'alpha',
      path: 'nested',
      output_mode: 'count',
    });
    expect(count).toContain('lib.rs:1');
    expect(count).toContain('notes.txt:1');
    // claw's full option set: ripgrep's type, multiline off.
    const typed = await tools.execute('grep_search', {
      pattern: 'alpha',
      path: 'nested',
      type: 'rust',
      multiline: false,
      '-C': 0,
    });
    expect(typed).toContain('lib.rs');
    expect(typed).not.toContain('notes.txt');
    for (const refused of [{ type: 'cobol' }, { multiline: true }]) {
      const error = await failure(
        tools.execute('grep_search', { pattern: 'alpha', path: 'nested', ...refused }),
      );
      expect(error.kind).toBe('invalid-args');
      expect(error.message).toContain(`unknown field "${Object.keys(refused)[0]}"`);
    }
    const context = await tools.execute('grep_search', {
      pattern: 'beta',
      path: 'nested',
      '-B': 1,
    });
    expect(context).toContain('notes.txt-1-alpha');
    expect(
      (await failure(tools.execute('grep_search', { pattern: '(alpha', path: 'nested' }))).kind,
    ).toBe('invalid-args');
  });
});

describe('claw-code’s small tools', () => {
  it('TodoWrite {todos: [{content, activeForm, status}]} gets ids and shows activeForm', async () => {
    const { tools } = workspace();
    const first = await tools.execute('TodoWrite', {
      todos: [
        { content: 'Add tool', activeForm: 'Adding tool', status: 'in_progress' },
        { content: 'Run tests', activeForm: 'Running tests', status: 'pending' },
      ],
    });
    expect(first).toBe(
      [
        'Tasks: 0/2 completed',
        '[~] Add tool (id 1) ← in progress: Adding tool',
        '[ ] Run tests (id 2)',
      ].join('\n'),
    );
    const second = await tools.execute('TodoWrite', {
      todos: [
        { content: 'Add tool', activeForm: 'Adding tool', status: 'completed' },
        { content: 'Run tests', activeForm: 'Running tests', status: 'completed' },
        { content: 'Verify', activeForm: 'Verifying', status: 'completed' },
      ],
    });
    expect(second.split('\n')[0]).toBe('Tasks: 3/3 completed');
    const blank = await failure(
      tools.execute('TodoWrite', {
        todos: [{ content: '   ', activeForm: 'Doing it', status: 'pending' }],
      }),
    );
    expect(blank.kind).toBe('invalid-args');
  });

  it('TodoWrite ids never collide with ids the model did give', async () => {
    const { tools } = workspace();
    const out = await tools.execute('TodoWrite', {
      todos: [
        { content: 'A', status: 'pending' },
        { id: '1', content: 'B', status: 'pending' },
        { content: 'C', status: 'pending' },
      ],
    });
    const ids = [...out.matchAll(/\(id ([^)]+)\)/g)].map((match) => match[1]);
    expect(new Set(ids).size).toBe(3);
    expect(ids[1]).toBe('1');
  });

  it('Sleep {duration_ms}, 0 included; past the maximum is invalid', async () => {
    const { tools } = workspace();
    expect(await tools.execute('Sleep', { duration_ms: 20 })).toMatch(/^Slept /);
    expect(await tools.execute('Sleep', { duration_ms: 0 })).toMatch(/^Slept /);
    expect((await failure(tools.execute('Sleep', { duration_ms: 999_999_999 }))).kind).toBe(
      'invalid-args',
    );
  });

  it('SendUserMessage and Brief {message, attachments, status}', async () => {
    const { tools } = workspace();
    const sent = await tools.executeResult('SendUserMessage', {
      message: 'hello user',
      attachments: ['shot.png'],
      status: 'normal',
    });
    expect(sent).toMatchObject({
      toolName: 'send_user_message',
      isError: false,
      details: { userMessage: 'hello user', attachments: ['shot.png'] },
    });
    expect(await tools.execute('Brief', { message: 'again', status: 'proactive' })).toBe(
      'Delivered to the user.',
    );
  });

  it('NotebookEdit {notebook_path, cell_id, new_source, cell_type, edit_mode}', async () => {
    const { cwd, tools } = workspace();
    const notebook = path.join(cwd, 'notebook.ipynb');
    fs.writeFileSync(
      notebook,
      JSON.stringify({
        cells: [
          {
            cell_type: 'code',
            id: 'cell-a',
            metadata: {},
            source: ['print(1)\n'],
            outputs: [],
            execution_count: null,
          },
        ],
        metadata: { kernelspec: { language: 'python' } },
        nbformat: 4,
        nbformat_minor: 5,
      }),
    );
    const cells = () =>
      (
        JSON.parse(fs.readFileSync(notebook, 'utf8')) as { cells: { source: string[] | string }[] }
      ).cells.map((cell) => [cell.source].flat().join(''));
    await tools.execute('NotebookEdit', {
      notebook_path: notebook,
      cell_id: 'cell-a',
      new_source: 'print(2)\n',
      edit_mode: 'replace',
    });
    expect(cells()).toEqual(['print(2)\n']);
    await tools.execute('NotebookEdit', {
      notebook_path: notebook,
      cell_id: 'cell-a',
      new_source: '# heading\n',
      cell_type: 'markdown',
      edit_mode: 'insert',
    });
    expect(cells()).toEqual(['print(2)\n', '# heading\n']);
    await tools.execute('NotebookEdit', {
      notebook_path: notebook,
      new_source: 'print(3)\n',
      edit_mode: 'insert',
    });
    expect(cells()).toEqual(['print(3)\n', 'print(2)\n', '# heading\n']);
    await tools.execute('NotebookEdit', {
      notebook_path: notebook,
      cell_id: 'cell-a',
      edit_mode: 'delete',
    });
    expect(cells()).toEqual(['print(3)\n', '# heading\n']);
    // Without edit_mode (optional in claw's schema) it replaces.
    const firstId = (JSON.parse(fs.readFileSync(notebook, 'utf8')) as { cells: { id: string }[] })
      .cells[0]?.id;
    await tools.execute('NotebookEdit', {
      notebook_path: notebook,
      cell_id: firstId,
      new_source: 'x = 1\n',
    });
    expect(cells()).toEqual(['x = 1\n', '# heading\n']);
  });

  it('PowerShell is not offered (pwsh cannot be installed here; see the README)', async () => {
    const { tools } = workspace();
    expect((await failure(tools.execute('PowerShell', { command: 'Get-Date' }))).kind).toBe(
      'not-found',
    );
  });
});
