import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { makeTempDir } from './test-helpers.js';

/** Pids of processes whose command line contains `tag`. */
function processesWith(tag: string): string[] {
  return fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(tag);
      } catch {
        return false;
      }
    });
}

describe('commands do not outlive the process that ran them', () => {
  it("process.exit ends a running foreground call, a background job and a finished call's setsid daemon", async () => {
    const dir = makeTempDir();
    const tag = `7${process.pid % 1000}.${Date.now() % 100_000}`;
    const entry = new URL('../dist/index.js', import.meta.url).href;
    const script = `
      import { BackgroundTasks, createBashTool } from ${JSON.stringify(entry)};
      const backgroundTasks = new BackgroundTasks();
      const bash = createBashTool({ cwd: process.cwd(), sandbox: 'off', backgroundTasks,
        spillDir: process.cwd() + '/spill' });
      const context = () => ({ toolCallId: 'c', toolName: 'bash', signal: new AbortController().signal,
        onUpdate() {}, onProgress() {} });
      await bash.execute({ command: 'exec sleep ${tag}1', run_in_background: true }, context());
      await bash.execute({ command: "setsid sh -c 'exec sleep ${tag}2' > /dev/null 2>&1 & echo started" }, context());
      // A foreground call still running when the process exits.
      void bash.execute({ command: 'echo go; exec sleep ${tag}3' }, context());
      const until = Date.now() + 20000;
      const fs = await import('node:fs');
      const seen = () => fs.readdirSync('/proc').filter((p) => /^\\d+$/.test(p)).some((p) => {
        try { return fs.readFileSync('/proc/' + p + '/cmdline', 'utf8').includes('${tag}3'); } catch { return false; }
      });
      while (!seen() && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
      process.exit(0);
    `;
    try {
      const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        cwd: dir,
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(child.stderr).toBe('');
      expect(child.status).toBe(0);
      // A process sent SIGKILL at exit still shows until the kernel next runs it (on a busy
      // machine, a moment later); one nobody killed would stay: wait a few seconds, no more.
      const left = () =>
        processesWith(tag).filter((pid) => {
          try {
            return !/\) [ZX] /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
          } catch {
            return false;
          }
        });
      await vi.waitFor(() => expect(left()).toEqual([]), { timeout: 5_000, interval: 50 });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
