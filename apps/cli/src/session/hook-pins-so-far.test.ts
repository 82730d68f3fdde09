import { mkdir, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { HooksConfig } from '@agent/command-hooks';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { tempDir } from '../testing/test-support.js';
import { hookFilePins } from './hook-file-pins.js';
import { HookPinRecord } from './hook-pin-record.js';

// A session's hook pins are recorded after each tool call, not only at its end (which a SIGKILL
// never reaches); that look stats the files first and reads them only when a stat changed. A
// change the stats could miss would be a hook whose rewritten script the next session trusts.

const cleanups: (() => Promise<void>)[] = [];
// Stats taken within seconds of a file's change prove nothing (racy, read again): the clock is put
// ahead so that the look after a change compares stats, as it does in a session.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Date.now() + 60_000);
});
afterEach(async () => {
  vi.useRealTimers();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function project(command: string, files: Record<string, string>) {
  const dir = await tempDir('agent-cli-hook-pins-so-far-');
  cleanups.push(dir.dispose);
  const root = join(dir.path, 'repo');
  const home = join(dir.path, 'home');
  for (const [name, content] of Object.entries(files)) {
    await mkdir(join(root, name, '..'), { recursive: true });
    await writeFile(join(root, name), content);
  }
  await mkdir(root, { recursive: true });
  const config: HooksConfig = { PostToolUse: [{ hooks: [{ type: 'command', command }] }] };
  const pins = hookFilePins(config, root, new HookPinRecord(home, root));
  /** What a new session's pins say of the hook: refused, and why. */
  const nextSession = () => {
    const next = hookFilePins(config, root, new HookPinRecord(home, root));
    return next.refuse({ type: 'command', command });
  };
  return { root, pins, nextSession };
}

describe('recordChanges during a session', () => {
  it('a script rewritten to the same size, its mtime set back: recorded', async () => {
    const { root, pins, nextSession } = await project('sh .agent/hooks/post.sh', {
      '.agent/hooks/post.sh': 'echo fine\n',
    });
    const script = join(root, '.agent/hooks/post.sh');
    const then = new Date('2020-01-01T00:00:00Z');
    await utimes(script, then, then);
    pins.recordChanges();
    await writeFile(script, 'echo evil\n');
    await utimes(script, then, then);
    expect((await stat(script)).mtime).toEqual(then);
    pins.recordChanges();
    expect(nextSession()).toContain('as an earlier session left them');
  });

  it('a bin missing at the start and planted later (npx prettier): recorded', async () => {
    const { root, pins, nextSession } = await project('npx prettier --write .', {
      'package.json': '{}',
    });
    pins.recordChanges();
    await mkdir(join(root, 'node_modules/.bin'), { recursive: true });
    await writeFile(join(root, 'node_modules/.bin/prettier'), '#!/bin/sh\nid\n');
    pins.recordChanges();
    expect(nextSession()).toContain('node_modules/.bin/prettier');
  });

  it('a file a script sources, rewritten: recorded', async () => {
    const { root, pins, nextSession } = await project('sh .agent/hooks/post.sh', {
      '.agent/hooks/post.sh': '. ./.agent/hooks/lib.sh\n',
      '.agent/hooks/lib.sh': 'echo fine\n',
    });
    pins.recordChanges();
    await writeFile(join(root, '.agent/hooks/lib.sh'), 'echo evil\n');
    pins.recordChanges();
    expect(nextSession()).toContain('.agent/hooks/lib.sh');
  });

  it('a script changed twice within a tick of the clock: the second change is recorded too', async () => {
    vi.useRealTimers();
    const { root, pins, nextSession } = await project('sh .agent/hooks/post.sh', {
      '.agent/hooks/post.sh': 'echo fine\n',
    });
    const script = join(root, '.agent/hooks/post.sh');
    await writeFile(script, 'echo okay\n');
    pins.recordChanges();
    await writeFile(script, 'echo evil\n');
    pins.recordChanges();
    // Only the last change is the one the next session finds.
    expect(nextSession()).toContain('as an earlier session left them');
  });

  it('files left as they were: nothing recorded', async () => {
    const { pins, nextSession } = await project('sh .agent/hooks/post.sh', {
      '.agent/hooks/post.sh': 'echo fine\n',
    });
    pins.recordChanges();
    pins.recordChanges();
    expect(nextSession()).toBeUndefined();
  });
});
