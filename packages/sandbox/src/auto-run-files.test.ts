import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hooksDirectories, workspaceAutoRunFiles } from './auto-run-files.js';
import type { Attempt } from './escape-attempts.js';
import { type Fixture, makeFixture, type RunReport, runAs } from './escape-harness.js';
import { explainFailure } from './explain-failure.js';
import { runnerSuite } from './runner-suite.js';
import { createSandbox } from './sandbox.js';

// Files in the workspace that other programs on the user's machine run later without asking:
// VS Code's tasks.json (`runOn: folderOpen`) and settings.json, JetBrains' .idea, a dev
// container's initializeCommand (run on the host), Claude Code's hooks, git hooks where
// core.hooksPath puts them in the tree. A sandboxed command wrote, created, renamed over or
// swapped them for links. Tried by the built package, as root and as nobody, a sandbox per
// command and one long-lived sandbox.

const { available, users, parent, runner } = runnerSuite('auto-run files', 'auto-run');

const planted = 'touch $OUT/pwned';
const tasks = JSON.stringify({
  version: '2.0.0',
  tasks: [{ label: 'x', type: 'shell', command: planted, runOptions: { runOn: 'folderOpen' } }],
});

/** Python renaming with renameat2 and RENAME_EXCHANGE (2): prints ESCAPED if it worked. */
const exchange = (from: string, to: string) =>
  `python3 -c 'import ctypes, os, sys; libc = ctypes.CDLL(None, use_errno=True); r = libc.renameat2(-100, sys.argv[1].encode(), -100, sys.argv[2].encode(), 2); print("ESCAPED exchanged " + sys.argv[2] if r == 0 else "refused: " + os.strerror(ctypes.get_errno()))' "${from}" "${to}"`;

const attempts: Attempt[] = [
  {
    name: 'rewrite an existing .vscode/settings.json, and the hooks core.hooksPath names',
    script: `cd "$WS"; echo '{"python.defaultInterpreterPath": "./evil"}' > .vscode/settings.json && echo ESCAPED settings; echo '${planted}' >> .githooks/pre-commit && echo ESCAPED hook; echo x > .githooks/post-checkout && echo ESCAPED new-hook; echo '{"mcp": {}}' > opencode.json && echo ESCAPED opencode-json; mkdir -p .kiro/settings && echo '{"mcpServers": {}}' > .kiro/settings/mcp.json && echo ESCAPED kiro; echo '{}' > .roo/mcp.json && echo ESCAPED roo; mkdir -p .continue/mcpServers && echo 'name: x' > .continue/mcpServers/x.yaml && echo ESCAPED continue; echo '{}' > .amazonq/mcp.json && echo ESCAPED amazonq; echo '[mcp_servers.x]' > .codex/config.toml && echo ESCAPED codex; true`,
  },
  {
    name: 'create tasks.json, and the folders that do not exist yet',
    script: `cd "$WS"; echo '${tasks}' > .vscode/tasks.json && echo ESCAPED tasks; mkdir -p .idea && echo '<x/>' > .idea/workspace.xml && echo ESCAPED idea; mkdir -p .devcontainer && echo '{"initializeCommand": "${planted}"}' > .devcontainer/devcontainer.json && echo ESCAPED devcontainer; echo '{}' > .devcontainer.json && echo ESCAPED devcontainer-file; mkdir -p .claude && echo '{"hooks": {}}' > .claude/settings.json && echo ESCAPED claude; mkdir -p .zed && echo '{}' > .zed/settings.json && echo ESCAPED zed; mkdir -p .opencode/plugins && echo 'export const P = async () => ({})' > .opencode/plugins/p.js && echo ESCAPED opencode; echo '{"mcp": {}}' > .opencode/opencode.jsonc && echo ESCAPED opencode-config; mkdir -p .gemini && echo '{"mcpServers": {}}' > .gemini/settings.json && echo ESCAPED gemini; mkdir -p .cursor && echo '{"version": 1, "hooks": {}}' > .cursor/hooks.json && echo ESCAPED cursor; true`,
  },
  {
    name: 'rename a folder of its own over them, or them away',
    script: `cd "$WS"; for d in .vscode .idea .devcontainer .githooks; do mkdir -p "mine$d" && echo x > "mine$d/tasks.json"; mv -T "mine$d" "$d" && echo "ESCAPED renamed over $d"; mv "$d" "old$d" && echo "ESCAPED moved $d"; rmdir "$d" 2>/dev/null && echo "ESCAPED removed $d"; done; ${exchange('mine.vscode', '.vscode')}; true`,
  },
  {
    name: 'swap them for links to folders of its own',
    script: `cd "$WS"; mkdir -p evil && echo '${tasks}' > evil/tasks.json; for d in .vscode .idea .devcontainer; do python3 -c 'import os, sys; os.symlink("evil", sys.argv[1] + ".link"); os.replace(sys.argv[1] + ".link", sys.argv[1]); print("ESCAPED linked " + sys.argv[1])' "$d" 2>&1 | tail -1; rm -rf "$d" 2>/dev/null; ln -s evil "$d" 2>/dev/null && test -L "$d" && echo "ESCAPED link $d"; done; ln -s evil .vscode.link; ${exchange('.vscode.link', '.vscode')}; true`,
  },
  {
    name: 'the rest of the workspace is writable',
    kind: 'works',
    script: 'cd "$WS"; echo ok > notes.txt && mkdir -p src && echo ok > src/a.ts && echo WORKS',
  },
];

describe.runIf(available).each(users)('auto-run files, as $label', (user) => {
  const runs = [
    { label: 'a sandbox per command', host: false, options: {} },
    { label: 'one long-lived sandbox', host: true, options: {} },
    { label: 'protectAutoRunFiles: false', host: false, options: { protectAutoRunFiles: false } },
  ] as const;
  const fixtures = new Map<string, Fixture>();
  const reports = new Map<string, RunReport>();

  beforeAll(async () => {
    for (const run of runs) {
      const fixture = await makeFixture(parent, {
        ...user,
        label: `${user.label}-${fixtures.size}`,
      });
      fixtures.set(run.label, fixture);
      const ws = fixture.workspace;
      fs.mkdirSync(path.join(ws, '.vscode'));
      fs.writeFileSync(path.join(ws, '.vscode/settings.json'), '{}\n');
      fs.writeFileSync(path.join(ws, 'opencode.json'), '{}\n');
      // Other agents' folders, there because the user uses those agents here.
      const agentFolders = ['.kiro', '.roo', '.continue', '.amazonq', '.codex'];
      for (const folder of agentFolders) fs.mkdirSync(path.join(ws, folder));
      fs.mkdirSync(path.join(ws, '.githooks'));
      fs.writeFileSync(path.join(ws, '.githooks/pre-commit'), '#!/bin/sh\n', { mode: 0o755 });
      // Written directly: git refuses a repository of another owner (nobody's, as root).
      fs.appendFileSync(path.join(ws, '.git/config'), '[core]\n\thooksPath = .githooks\n');
      if (user.uid !== undefined) {
        for (const entry of [
          '.vscode',
          '.vscode/settings.json',
          '.githooks',
          '.githooks/pre-commit',
          'opencode.json',
          ...agentFolders,
        ])
          fs.chownSync(path.join(ws, entry), user.uid, user.gid ?? user.uid);
      }
      const [report] = await runAs(user, runner, fixture, [
        {
          label: run.label,
          host: run.host,
          options: { writableRoots: [ws], ...run.options },
          cwd: ws,
          env: { WS: ws, OUT: fixture.outside },
          attempts,
        },
      ]);
      if (report === undefined) throw new Error(`no report for ${run.label}`);
      reports.set(run.label, report);
    }
  }, 300_000);
  afterAll(async () => {
    for (const fixture of fixtures.values()) await fixture.close();
  });

  describe.each(runs.slice(0, 2))('$label', (run) => {
    it('writes, creations, renames and link swaps all fail, and say why', () => {
      const report = reports.get(run.label);
      for (const result of report?.results ?? []) {
        if (result.name.startsWith('the rest')) expect(result.output).toContain('WORKS');
        else expect(result.output, result.name).not.toContain('ESCAPED');
      }
      const outputs = report?.results.map((result) => result.output) ?? [];
      expect(outputs[0]).toMatch(/settings\.json: Read-only file system/);
      expect(outputs[1]).toMatch(/tasks\.json: Read-only file system/);
      expect(outputs[2]).toMatch(/Device or resource busy/);
      expect(outputs[2]).toMatch(/refused: Device or resource busy/);
      expect(outputs[3]).toMatch(/Is a directory: '\.vscode\.link' -> '\.vscode'/);
      expect(outputs[3]).toMatch(/refused: Device or resource busy/);
    });

    it('the files are as they were, and the folders made for the sandbox are gone after it', () => {
      const ws = fixtures.get(run.label)?.workspace ?? '';
      expect(fs.readFileSync(path.join(ws, '.vscode/settings.json'), 'utf8')).toBe('{}\n');
      expect(fs.readdirSync(path.join(ws, '.vscode'))).toEqual(['settings.json']);
      expect(fs.readFileSync(path.join(ws, 'opencode.json'), 'utf8')).toBe('{}\n');
      expect(fs.readFileSync(path.join(ws, '.githooks/pre-commit'), 'utf8')).toBe('#!/bin/sh\n');
      for (const name of [
        '.idea',
        '.devcontainer',
        '.devcontainer.json',
        '.claude',
        '.zed',
        '.opencode',
        '.gemini',
        '.cursor',
      ])
        expect(fs.existsSync(path.join(ws, name)), name).toBe(false);
      expect(fs.existsSync(path.join(fixtures.get(run.label)?.outside ?? '', 'pwned'))).toBe(false);
    });
  });

  it('control: with protectAutoRunFiles: false the same writes go through', () => {
    const report = reports.get('protectAutoRunFiles: false');
    const outputs = report?.results.map((result) => result.output) ?? [];
    expect(outputs[0]).toContain('ESCAPED settings');
    expect(outputs[0]).toContain('ESCAPED hook');
    expect(outputs[1]).toContain('ESCAPED tasks');
    expect(outputs[1]).toContain('ESCAPED devcontainer');
    expect(outputs[1]).toContain('ESCAPED opencode');
    expect(outputs[1]).toContain('ESCAPED gemini');
    expect(outputs[1]).toContain('ESCAPED cursor');
    expect(outputs[0]).toContain('ESCAPED opencode-json');
    expect(outputs[0]).toContain('ESCAPED kiro');
    expect(outputs[0]).toContain('ESCAPED codex');
  });
});

describe('which files, and how a refused write is explained', () => {
  it("a hooks directory core.hooksPath puts in the workspace, with husky's scripts above `_`", () => {
    const workspace = fs.realpathSync(fs.mkdtempSync('/var/tmp/auto-run-hooks-'));
    try {
      execFileSync('git', ['init', '-q', workspace]);
      expect(hooksDirectories(workspace)).toEqual([]);
      execFileSync('git', ['-C', workspace, 'config', 'core.hooksPath', '.husky/_']);
      expect(hooksDirectories(workspace)).toEqual([
        path.join(workspace, '.husky/_'),
        path.join(workspace, '.husky'),
      ]);
      execFileSync('git', ['-C', workspace, 'config', 'core.hooksPath', '/etc/hooks']);
      expect(hooksDirectories(workspace)).toEqual([]);
    } finally {
      fs.rmSync(workspace, { recursive: true, force: true });
    }
  });

  it.each([
    '/bin/bash: line 1: .vscode/tasks.json: Read-only file system',
    "mv: cannot move 'mine' to '.vscode': Device or resource busy",
  ])('%s', (output) => {
    const explanation = explainFailure(output, {
      writableRoots: ['/ws'],
      network: 'off',
      hiddenPaths: [],
      unixSockets: 'blocked',
      autoRunFiles: ['/ws/.vscode', '/ws/.idea'],
    });
    expect(explanation).toMatch(/\/ws\/\.vscode is read-only inside it.*run later without asking/);
  });
});

describe('the empty folders made for missing ones', () => {
  beforeEach(skipWithout('bwrap'));

  it('stay while any sandbox of the process uses them, and are gone after the last closes', async () => {
    const workspace = fs.realpathSync(fs.mkdtempSync('/var/tmp/auto-run-shared-'));
    try {
      const open = () =>
        createSandbox({ mode: 'required', writableRoots: [workspace], onWarning: () => undefined });
      const first = open();
      const second = open();
      for (const sandbox of [first, second])
        await sandbox.wrap({ file: 'true', args: [], cwd: workspace, env: {} });
      expect(fs.readdirSync(workspace).sort()).toEqual(
        workspaceAutoRunFiles
          .filter((file) => file.evenNew)
          .map((file) => file.name)
          .sort(),
      );
      await first.close();
      expect(fs.existsSync(path.join(workspace, '.vscode'))).toBe(true);
      // One the user filled meanwhile is theirs: it stays.
      fs.writeFileSync(path.join(workspace, '.idea', 'workspace.xml'), '<x/>');
      await second.close();
      expect(fs.readdirSync(workspace)).toEqual(['.idea']);
    } finally {
      fs.rmSync(workspace, { recursive: true, force: true });
    }
  });
});
