import * as fs from 'node:fs';
import * as path from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BackgroundTasks } from './background-tasks.js';
import { createBashTool } from './bash.js';
import { makeTempDir, resultText, testContext } from './test-helpers.js';

// A call the permission gate allows only to read (`ctx.readOnly`: read-only and plan mode) runs
// in the sandbox's read-only view: whatever the line really does, the workspace is read-only to
// it. Before, it ran in the writable sandbox, so every mistake of the read-only analysis wrote
// the workspace. Real bubblewrap, in the session's long-lived sandbox and in one per command, in
// the foreground and in the background.

const sessions: BackgroundTasks[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close();
});
beforeEach(skipWithout('bwrap'));

function session(reuseSandbox: boolean) {
  const ws = makeTempDir('bash-read-only-ws-');
  fs.writeFileSync(path.join(ws, 'kept.txt'), 'kept\n');
  const backgroundTasks = new BackgroundTasks();
  sessions.push(backgroundTasks);
  const bash = createBashTool({
    cwd: ws,
    backgroundTasks,
    sandbox: 'required',
    reuseSandbox,
    killGraceMs: 200,
  });
  return { ws, bash, backgroundTasks };
}

const writes = 'echo x > made.txt; echo y >> kept.txt; rm -f kept.txt; cat kept.txt';

describe.each([
  ['one long-lived sandbox', true],
  ['a sandbox per command', false],
])('bash in %s', (_label, reuseSandbox) => {
  it('a call allowed only to read cannot write the workspace, and is told why', async () => {
    const { ws, bash } = session(reuseSandbox);
    const result = await bash.execute({ command: writes }, { ...testContext(), readOnly: true });
    const text = resultText(result);
    expect(text).toContain('Read-only file system');
    expect(text).toContain('kept\n');
    expect(text).toContain('allowed only to read');
    expect(result.details?.sandboxed).toBe(true);
    expect(fs.existsSync(path.join(ws, 'made.txt'))).toBe(false);
    expect(fs.readFileSync(path.join(ws, 'kept.txt'), 'utf8')).toBe('kept\n');
  });

  it('in the background too', async () => {
    const { ws, bash, backgroundTasks } = session(reuseSandbox);
    await bash.execute(
      { command: writes, run_in_background: true },
      { ...testContext(), readOnly: true },
    );
    const [task] = backgroundTasks.list();
    await task?.handle.done;
    expect(task?.stderr.snapshot().text).toContain('Read-only file system');
    expect(fs.existsSync(path.join(ws, 'made.txt'))).toBe(false);
    expect(fs.readFileSync(path.join(ws, 'kept.txt'), 'utf8')).toBe('kept\n');
  });

  it('/tmp takes writes, and a later call that may write still writes', async () => {
    const { ws, bash } = session(reuseSandbox);
    const scratch = await bash.execute(
      { command: 'echo scratch > /tmp/s.txt && cat /tmp/s.txt' },
      { ...testContext(), readOnly: true },
    );
    expect(resultText(scratch)).toContain('scratch');
    expect(scratch.isError).not.toBe(true);
    const written = await bash.execute({ command: 'echo x > made.txt' }, testContext());
    expect(written.isError).not.toBe(true);
    expect(fs.readFileSync(path.join(ws, 'made.txt'), 'utf8')).toBe('x\n');
  });
});
