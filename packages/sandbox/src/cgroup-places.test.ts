import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ownCgroups, prepareCgroupPlaces } from './cgroup-places.js';

// Where the sandbox's cgroups go, from what the kernel says about this process. This machine has
// cgroup v1 only (resource-limits.test.ts runs the real thing there); cgroup v2 — the usual case
// on users' machines — is read here from mountinfo and membership texts as v2 kernels write them,
// over a directory tree standing in for the cgroup file system (a stand-in: the kernel's own
// files cannot be made here, and this machine's v2 hierarchy has no controllers).

const temporaries: string[] = [];
afterEach(() => {
  for (const directory of temporaries.splice(0))
    fs.rmSync(directory, { recursive: true, force: true });
});

function fakeRoot(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cgroup-places-'));
  temporaries.push(root);
  return root;
}

const hybridMountinfo = (root: string) =>
  [
    `31 23 0:28 / ${root} rw,relatime - tmpfs tmpfs rw,mode=755`,
    `35 31 0:32 / ${root}/memory rw,relatime - cgroup cgroup rw,memory`,
    `39 31 0:36 / ${root}/pids rw,relatime - cgroup cgroup rw,pids`,
    `40 31 0:37 / ${root}/cpu\\040and\\040more rw,relatime - cgroup cgroup rw,cpu,cpuacct`,
    `41 31 0:38 / ${root}/unified rw,relatime - cgroup2 cgroup2 rw`,
  ].join('\n');

describe('ownCgroups', () => {
  it('cgroup v1 (hybrid): one directory per controller, at our path in each hierarchy', () => {
    const own = ownCgroups({
      pid: 1,
      mountinfo: hybridMountinfo('/sys/fs/cgroup'),
      membership: '9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n1:cpu,cpuacct:/x\n0::/\n',
    });
    expect(own).toEqual({
      unified: '/sys/fs/cgroup/unified',
      v1: { pids: '/sys/fs/cgroup/pids', memory: '/sys/fs/cgroup/memory/process_api/abc' },
    });
  });

  it('cgroup v2 only, a user session scope', () => {
    const own = ownCgroups({
      pid: 1,
      mountinfo: '30 24 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate',
      membership: '0::/user.slice/user-1000.slice/user@1000.service/app.slice/agent.scope\n',
    });
    expect(own).toEqual({
      unified: '/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/agent.scope',
      v1: {},
    });
  });

  it('a container whose mount is rooted at its own cgroup; a path outside the mount is not guessed', () => {
    const inside = ownCgroups({
      pid: 1,
      mountinfo: '30 24 0:26 /docker/abc /sys/fs/cgroup ro,nosuid - cgroup2 cgroup2 rw',
      membership: '0::/docker/abc/job\n',
    });
    expect(inside.unified).toBe('/sys/fs/cgroup/job');
    const outside = ownCgroups({
      pid: 1,
      mountinfo: '30 24 0:26 /docker/abc /sys/fs/cgroup ro,nosuid - cgroup2 cgroup2 rw',
      membership: '0::/other\n',
    });
    expect(outside.unified).toBeUndefined();
  });

  it('malformed lines are skipped, not guessed at', () => {
    expect(
      ownCgroups({ pid: 1, mountinfo: 'garbage\n - \n', membership: 'nonsense\n::\n' }),
    ).toEqual({ v1: {} });
  });
});

/**
 * A path as the kernel writes it in mountinfo: space, tab, newline and backslash as octal escapes
 * (a fake root under a TMPDIR with a space in it was cut at the space).
 */
function mountinfoPath(mountPoint: string): string {
  return mountPoint.replace(
    /[ \t\n\\]/g,
    (character) => `\\${character.charCodeAt(0).toString(8).padStart(3, '0')}`,
  );
}

describe('prepareCgroupPlaces', () => {
  it('cgroup v2: a cgroup that holds other processes cannot hand controllers down — said, nothing moved', () => {
    const root = fakeRoot();
    const scope = path.join(root, 'app.slice', 'agent.scope');
    fs.mkdirSync(scope, { recursive: true });
    fs.writeFileSync(path.join(scope, 'cgroup.controllers'), 'cpu memory pids\n');
    fs.writeFileSync(path.join(scope, 'cgroup.subtree_control'), '\n');
    fs.writeFileSync(path.join(scope, 'cgroup.events'), 'populated 1\nfrozen 0\n');
    fs.writeFileSync(path.join(scope, 'cgroup.procs'), '4242\n100\n4243\n');
    const found = prepareCgroupPlaces(
      {
        pid: 100,
        mountinfo: `30 24 0:26 / ${mountinfoPath(root)} rw - cgroup2 cgroup2 rw`,
        membership: '0::/app.slice/agent.scope\n',
      },
      ['pids', 'memory'],
    );
    expect(found.places).toEqual([]);
    expect(found.missing.pids).toMatch(
      /^cgroup v2: .*agent\.scope holds other processes too \(4242, 4243\).*systemd-run --user --scope -p Delegate=yes/,
    );
    expect(found.missing.memory).toBe(found.missing.pids);
    // Nothing was made or changed.
    expect(fs.readdirSync(scope).sort()).toEqual([
      'cgroup.controllers',
      'cgroup.events',
      'cgroup.procs',
      'cgroup.subtree_control',
    ]);
  });

  it('no hierarchy offers a controller: said per controller', () => {
    const found = prepareCgroupPlaces(
      {
        pid: 100,
        mountinfo: '41 31 0:38 / /nonexistent/unified rw - cgroup2 cgroup2 rw',
        membership: '0::/\n',
      },
      ['pids', 'memory'],
    );
    expect(found.places).toEqual([]);
    expect(found.missing).toEqual({
      pids: 'no cgroup hierarchy here offers the pids controller',
      memory: 'no cgroup hierarchy here offers the memory controller',
    });
  });

  it('cgroup v1: a directory this user cannot make a cgroup in is said, with the error', () => {
    const root = fakeRoot();
    fs.mkdirSync(path.join(root, 'pids'));
    fs.chmodSync(path.join(root, 'pids'), 0o555);
    const found = prepareCgroupPlaces(
      {
        pid: 100,
        mountinfo: `39 31 0:36 / ${mountinfoPath(`${root}/pids`)} rw - cgroup cgroup rw,pids`,
        membership: '8:pids:/\n',
      },
      ['pids'],
    );
    expect(found.places).toEqual([]);
    // Root may write a 0555 directory: then the probe child lacks the kernel's limit file.
    expect(found.missing.pids).toMatch(
      process.getuid?.() === 0
        ? /a cgroup made in .* cannot be limited \(.*pids\.max/
        : /cannot make a cgroup in .* \(EACCES/,
    );
    // The probe did not stay.
    expect(fs.readdirSync(path.join(root, 'pids'))).toEqual([]);
  });
});

describe('a cgroup whose name starts with two dots', () => {
  it('lies inside the mount: `..job` is a name, not the parent', () => {
    const own = ownCgroups({
      pid: 1,
      mountinfo: '30 24 0:26 /docker/abc /sys/fs/cgroup ro,nosuid - cgroup2 cgroup2 rw',
      membership: '0::/docker/abc/..job\n',
    });
    expect(own.unified).toBe('/sys/fs/cgroup/..job');
    const parent = ownCgroups({
      pid: 1,
      mountinfo: '30 24 0:26 /docker/abc /sys/fs/cgroup ro,nosuid - cgroup2 cgroup2 rw',
      membership: '0::/docker/..abc\n',
    });
    expect(parent.unified).toBeUndefined();
  });
});
