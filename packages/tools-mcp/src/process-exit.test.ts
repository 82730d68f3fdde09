import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { makeTempDir } from './test-helpers.js';

// A stdio server never outlives the process that started it, however that process ends while
// the server is still connecting: process.exit, an uncaught error, an unhandled rejection. The
// server here ignores SIGTERM (an ignored signal stays ignored across exec) and never reads its
// stdin, so only SIGKILL ends it.

/** Live (not zombie) processes whose command line contains `tag`. */
function processesWith(tag: string): string[] {
  return fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        if (/\) [ZX] /.test(fs.readFileSync(`/proc/${entry}/stat`, 'utf8'))) return false;
        return fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(tag);
      } catch {
        return false;
      }
    });
}

describe('stdio servers do not outlive their process', () => {
  it.each([
    ['process.exit', 'process.exit(0);', 0],
    ['an uncaught error', "setImmediate(() => { throw new Error('boom'); });", 1],
    ['an unhandled rejection', "void Promise.reject(new Error('boom'));", 1],
  ])(
    '%s while a server that ignores SIGTERM is still connecting',
    (_label, ending, expected) => {
      const dir = makeTempDir();
      const tag = `6${process.pid % 1000}${Date.now() % 100_000}`;
      const entry = new URL('../dist/index.js', import.meta.url).href;
      const script = `
      import { McpToolAdapter } from ${JSON.stringify(entry)};
      import * as fs from 'node:fs';
      // Never answers: connect() stays pending.
      void McpToolAdapter.connect({ name: 'stuck', transport: { type: 'stdio', command: 'sh',
        args: ['-c', 'trap "" TERM; exec sleep ${tag}'] } }).catch(() => {});
      const until = Date.now() + 20000;
      const running = () => fs.readdirSync('/proc').filter((p) => /^\\d+$/.test(p)).some((p) => {
        try { return fs.readFileSync('/proc/' + p + '/cmdline', 'utf8') === 'sleep\\x00${tag}\\x00'; } catch { return false; }
      });
      while (!running() && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      if (!running()) { console.error('the server never started'); process.exit(3); }
      ${ending}
    `;
      const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        cwd: dir,
        encoding: 'utf8',
        timeout: 60_000,
      });
      try {
        expect(result.status, result.stderr).toBe(expected);
        if (expected !== 0) expect(result.stderr).toContain('Error: boom');
        // SIGKILL was sent as the process ended; on a loaded machine the kernel may take a moment
        // to end the server (a killed process is gone, or a zombie, soon after — never for good).
        const until = Date.now() + 10_000;
        while (processesWith(`sleep\0${tag}`).length > 0 && Date.now() < until) {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
        }
        expect(processesWith(`sleep\0${tag}`)).toEqual([]);
      } finally {
        for (const pid of processesWith(tag)) {
          try {
            process.kill(Number(pid), 'SIGKILL');
          } catch {}
        }
        fs.rmSync(dir, { recursive: true, force: true });
      }
      // A node process that starts a server and waits for it (up to 20 s on a loaded machine).
    },
    90_000,
  );
});

// A server's daemon that left its group and cleared its environment (`env -i setsid …`) outlived
// the server and the host, however the host ended (measured with the CLI, as root and nobody).
// The launcher now reaps: it is the server's subreaper and ends such daemons with it.
describe('a daemon a stdio server leaves with a cleared environment', () => {
  it.each([
    ['process.exit', 'process.exit(0);', 0],
    ['an uncaught error', "setImmediate(() => { throw new Error('boom'); });", 1],
    ['SIGKILL of the host', "process.kill(process.pid, 'SIGKILL');", null],
  ])(
    'is gone after %s, with the server',
    (_label, ending, expected) => {
      const dir = makeTempDir();
      const tag = `7${process.pid % 1000}${Date.now() % 100_000}`;
      const daemonTag = `8${process.pid % 1000}${Date.now() % 100_000}`;
      const entry = new URL('../dist/index.js', import.meta.url).href;
      const script = `
      import { McpToolAdapter } from ${JSON.stringify(entry)};
      import * as fs from 'node:fs';
      void McpToolAdapter.connect({ name: 'stuck', transport: { type: 'stdio', command: 'sh',
        args: ['-c', 'env -i setsid sleep ${daemonTag} > /dev/null 2>&1 & trap "" TERM; exec sleep ${tag}'] } }).catch(() => {});
      const until = Date.now() + 20000;
      const running = (t) => fs.readdirSync('/proc').filter((p) => /^\\d+$/.test(p)).some((p) => {
        try { return fs.readFileSync('/proc/' + p + '/cmdline', 'utf8') === 'sleep\\x00' + t + '\\x00'; } catch { return false; }
      });
      while (!(running('${tag}') && running('${daemonTag}')) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      if (!running('${daemonTag}')) { console.error('the daemon never started'); process.exit(3); }
      ${ending}
    `;
      const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        cwd: dir,
        encoding: 'utf8',
        timeout: 60_000,
      });
      try {
        expect(result.status, result.stderr).toBe(expected);
        const until = Date.now() + 10_000;
        const left = () => [
          ...processesWith(`sleep\0${tag}`),
          ...processesWith(`sleep\0${daemonTag}`),
        ];
        while (left().length > 0 && Date.now() < until)
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
        expect(left()).toEqual([]);
      } finally {
        for (const pid of [...processesWith(tag), ...processesWith(daemonTag)]) {
          try {
            process.kill(Number(pid), 'SIGKILL');
          } catch {}
        }
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
    90_000,
  );
});
