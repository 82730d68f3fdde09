import { execFile, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { launchRoots } from './launch-roots.js';
import { createSandbox } from './sandbox.js';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A fresh folder under the real /tmp (which the sandbox replaces with an empty one). */
function tmpFolder(prefix: string): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join('/tmp', prefix)));
  made.push(dir);
  return dir;
}

/** A project under /tmp: package.json at its root, a dependency in node_modules, a server in src/. */
function project(): { root: string; server: string } {
  const root = tmpFolder('launch-project-');
  fs.writeFileSync(path.join(root, 'package.json'), '{"name":"p","type":"module"}');
  const dependency = path.join(root, 'node_modules', 'dep');
  fs.mkdirSync(dependency, { recursive: true });
  fs.writeFileSync(path.join(dependency, 'package.json'), '{"name":"dep","main":"index.js"}');
  fs.writeFileSync(path.join(dependency, 'index.js'), 'module.exports = "from the dependency";');
  fs.mkdirSync(path.join(root, 'packages', 'server', 'src'), { recursive: true });
  fs.writeFileSync(path.join(root, 'packages', 'server', 'package.json'), '{"type":"module"}');
  const server = path.join(root, 'packages', 'server', 'src', 'server.mjs');
  fs.writeFileSync(
    server,
    "import { createRequire } from 'node:module';\nconsole.log(createRequire(import.meta.url)('dep'));\n",
  );
  return { root, server };
}

function run(invocation: {
  file: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
}): Promise<string> {
  return new Promise((resolve) => {
    execFile(
      invocation.file,
      [...invocation.args],
      { env: invocation.env },
      (error, stdout, stderr) => resolve(error === null ? stdout : `failed: ${stderr}`),
    );
  });
}

describe('launchRoots', () => {
  const env = { PATH: '/usr/bin:/bin' };

  it('a FIFO in place of the program or of a path a script names is not read (it held the launch for ever)', () => {
    const workspace = tmpFolder('launch-fifo-');
    const fifo = path.join(workspace, 'server');
    execFileSync('mkfifo', [fifo]);
    fs.chmodSync(fifo, 0o755);
    // The program itself: a path, so it is not looked up on PATH (where a FIFO is skipped).
    expect(launchRoots({ file: fifo, args: [], cwd: workspace, env })).toEqual([workspace]);
    expect(launchRoots({ file: './server', args: [], cwd: workspace, env })).toEqual([workspace]);
    const shim = path.join(workspace, 'start');
    fs.writeFileSync(shim, `#!/bin/sh\nexec "${fifo}" "$@"\n`, { mode: 0o755 });
    expect(launchRoots({ file: shim, args: [], cwd: workspace, env })).toEqual([workspace]);
  });

  it('shows code given as an argument with the project it belongs to (its outermost package.json)', () => {
    const { root, server } = project();
    expect(launchRoots({ file: '/bin/sh', args: [server], cwd: '/', env })).toEqual([root]);
  });

  it('shows what a small launcher script execs, with its project', () => {
    const { root, server } = project();
    const workspace = tmpFolder('launch-ws-');
    const shim = path.join(workspace, 'start');
    fs.writeFileSync(shim, `#!/bin/sh\nexec node "${server}" "$@"\n`, { mode: 0o755 });
    expect(launchRoots({ file: shim, args: [], cwd: workspace, env })).toEqual([workspace, root]);
  });

  it('never shows /tmp itself, a file directly in it stands alone', () => {
    const file = path.join('/tmp', `launch-alone-${process.pid}.mjs`);
    fs.writeFileSync(file, 'console.log(1)\n');
    made.push(file);
    expect(launchRoots({ file: '/bin/sh', args: [file], cwd: '/', env })).toEqual([file]);
  });

  it('never reads code after -c / -e as a path (a model’s command line for bash -c)', () => {
    const { server } = project();
    for (const flag of ['-c', '-lc', '-e', '--eval'])
      expect(launchRoots({ file: '/bin/sh', args: [flag, server], cwd: '/', env })).toEqual([]);
  });

  it('shows nothing for programs and arguments that are visible anyway', () => {
    expect(
      launchRoots({
        file: 'sh',
        args: ['-c', 'echo /tmp/nothing-here', '/etc/hostname'],
        cwd: '/',
        env,
      }),
    ).toEqual([]);
  });

  it('ignores paths a script names that do not exist, and a big file’s text', () => {
    const workspace = tmpFolder('launch-ws-');
    const shim = path.join(workspace, 'start');
    fs.writeFileSync(shim, `#!/bin/sh\nexec /tmp/no-such-dir-${process.pid}/bin/x\n`, {
      mode: 0o755,
    });
    expect(launchRoots({ file: shim, args: [], cwd: workspace, env })).toEqual([workspace]);
  });

  it('stops below the home folder when home is under /tmp', () => {
    const home = tmpFolder('launch-home-');
    fs.writeFileSync(path.join(home, 'package.json'), '{}');
    const tool = path.join(home, 'tools', 'server');
    fs.mkdirSync(tool, { recursive: true });
    fs.writeFileSync(path.join(tool, 'package.json'), '{}');
    fs.writeFileSync(path.join(tool, 'main.js'), '');
    const before = process.env.HOME;
    process.env.HOME = home;
    try {
      expect(
        launchRoots({ file: '/bin/sh', args: [path.join(tool, 'main.js')], cwd: '/', env }),
      ).toEqual([tool]);
    } finally {
      process.env.HOME = before;
    }
  });
});

describe('a launch from a project under /tmp, in the sandbox', () => {
  beforeEach(skipWithout('bwrap'));
  it('runs node on a server under /tmp that loads its node_modules; the rest of /tmp stays private', async () => {
    const { server } = project();
    const workspace = tmpFolder('launch-ws-');
    const other = tmpFolder('launch-private-');
    fs.writeFileSync(path.join(other, 'private.txt'), 'x');
    const sandbox = createSandbox({ mode: 'required', writableRoots: [workspace] });
    const env = { ...process.env, PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin` };
    const direct = await run(
      await sandbox.wrap({ file: process.execPath, args: [server], cwd: workspace, env }),
    );
    expect(direct).toBe('from the dependency\n');
    // Through a launcher in the workspace that execs it (a node_modules/.bin shim, say).
    const shim = path.join(workspace, 'start');
    fs.writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${server}"\n`, { mode: 0o755 });
    expect(await run(await sandbox.wrap({ file: shim, args: [], cwd: workspace, env }))).toBe(
      'from the dependency\n',
    );
    const peek = await run(
      await sandbox.wrap({
        file: '/bin/sh',
        args: ['-c', `cat ${path.join(other, 'private.txt')} 2>/dev/null || echo hidden`],
        cwd: workspace,
        env,
      }),
    );
    expect(peek).toBe('hidden\n');
  });
});
