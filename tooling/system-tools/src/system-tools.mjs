// The system tools some test suites need (bubblewrap, socat, ripgrep, tmux, curl, python3): how to
// find out whether one works here, how to install it, and the records of tests skipped for want of
// one. Shared by the test helper (`skipWithout`) and `scripts/run.mjs` (the line up front and the
// summary at the end of `npm test`), so it is plain JavaScript with no dependencies: run.mjs loads
// it on any Node ≥ 18 before anything is installed. Types: system-tools.d.mts.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Every tool a suite may need, by command name. `apt` and `brew` name the package that installs
 * it (Debian/Ubuntu, Homebrew); no `brew` means it does not exist on macOS. `probe` is a command
 * line that exits 0 only where the tool works — for bubblewrap that means creating namespaces,
 * which a container or a kernel setting can forbid even when it is installed.
 */
export const systemTools = {
  bwrap: {
    label: 'bubblewrap',
    apt: 'bubblewrap',
    linuxOnly: true,
    probe: ['--ro-bind', '/', '/', '--dev', '/dev', '--unshare-all', '--die-with-parent', 'true'],
  },
  socat: { label: 'socat', apt: 'socat', brew: 'socat', probe: ['-V'] },
  rg: { label: 'ripgrep', apt: 'ripgrep', brew: 'ripgrep', probe: ['--version'] },
  tmux: { label: 'tmux', apt: 'tmux', brew: 'tmux', probe: ['-V'] },
  curl: { label: 'curl', apt: 'curl', brew: 'curl', probe: ['--version'] },
  python3: { label: 'python3', apt: 'python3', brew: 'python', probe: ['--version'] },
  // macOS ships xxd with vim.
  xxd: { label: 'xxd', apt: 'xxd', brew: 'vim', probe: ['-v'] },
  // What a trusted hook's Ruby loads (the CLI's pins): ruby, and Bundler's Gemfile.
  ruby: { label: 'ruby', apt: 'ruby', brew: 'ruby', probe: ['--version'] },
  bundle: { label: 'bundler', apt: 'bundler', brew: 'ruby', probe: ['--version'] },
  // A trusted hook's `pre-commit run` (the CLI pins its config).
  'pre-commit': {
    label: 'pre-commit',
    apt: 'pre-commit',
    brew: 'pre-commit',
    probe: ['--version'],
  },
  // mise (a trusted hook's `mise run`, and its shims reading .tool-versions): no Debian package;
  // .ci/run installs it from the npm registry (@jdxcode/mise-linux-x64).
  mise: { label: 'mise', brew: 'mise', probe: ['--version'] },
};

/** The tools `npm test` checks up front: every one some suite needs. */
export const preflightTools = ['bwrap', 'socat', 'rg', 'tmux', 'curl', 'python3'];

/** Whether `CI` says this is a CI run (`true`, `1`, anything but empty, `0` or `false`). */
export function isCi(env = process.env) {
  const value = (env.CI ?? '').trim().toLowerCase();
  return value !== '' && value !== '0' && value !== 'false';
}

const problems = new Map();

/**
 * Why `command` cannot be used here, or undefined when it works. Looked up on `env.PATH`;
 * answers are remembered per command and PATH.
 */
export function systemToolProblem(
  command,
  { env = process.env, platform = process.platform } = {},
) {
  const tool = systemTools[command];
  if (tool === undefined) throw new TypeError(`unknown system tool ${command}`);
  const key = `${command}\0${platform}\0${env.PATH ?? ''}`;
  if (problems.has(key)) return problems.get(key);
  let problem;
  if (tool.linuxOnly && platform !== 'linux') {
    problem = `${tool.label} is Linux-only (no ${tool.label} on ${platformName(platform)})`;
  } else {
    let probe = spawnSync(command, tool.probe, { env, encoding: 'utf8', timeout: 10_000 });
    // A loaded machine (the official CI at load 18) can take more than 10 s to start one:
    // slow is not missing, so a timeout is tried once more with room to spare.
    if (probe.error?.code === 'ETIMEDOUT')
      probe = spawnSync(command, tool.probe, { env, encoding: 'utf8', timeout: 120_000 });
    if (probe.error?.code === 'ENOENT') problem = `${tool.label} not installed`;
    else if (probe.error !== undefined)
      problem = `${tool.label} could not start (${probe.error.message})`;
    else if (probe.status !== 0) {
      const said = `${probe.stderr ?? ''}`.trim().split('\n')[0] || `exit ${probe.status}`;
      problem =
        command === 'bwrap'
          ? `bubblewrap cannot create namespaces here (${said})`
          : `${tool.label} does not run (${said})`;
    }
  }
  problems.set(key, problem);
  return problem;
}

/** The tools among `commands` that cannot be used here, each with its problem. */
export function missingSystemTools(commands = preflightTools, options = {}) {
  return commands.flatMap((command) => {
    const problem = systemToolProblem(command, options);
    return problem === undefined ? [] : [{ command, problem }];
  });
}

/** The commands among `missing` that installing a package would bring (not a bubblewrap that is there but cannot run). */
export function installableTools(missing) {
  return missing
    .filter(({ problem }) => problem.endsWith(' not installed'))
    .map(({ command }) => command);
}

/**
 * The command that installs `commands` on `platform` (`sudo` unless root), or undefined when
 * none does (bubblewrap on macOS, an installed bubblewrap that cannot create namespaces).
 */
export function installCommand(commands, { platform = process.platform, root = isRoot() } = {}) {
  const sudo = root ? '' : 'sudo ';
  const field = platform === 'darwin' ? 'brew' : 'apt';
  const names = [
    ...new Set(commands.map((command) => systemTools[command]?.[field]).filter(Boolean)),
  ];
  if (names.length === 0) return undefined;
  return platform === 'darwin'
    ? `brew install ${names.join(' ')}`
    : `${sudo}apt-get install ${names.join(' ')}`;
}

/**
 * The one line `npm test` prints up front when tools are missing: what is missing, the command
 * that installs it, and what happens without it (skipped, or under CI a failure). Undefined when
 * nothing is missing.
 */
export function preflightMessage(missing, { ci = isCi(), platform = process.platform, root } = {}) {
  if (missing.length === 0) return undefined;
  const command = installCommand(installableTools(missing), { platform, root: root ?? isRoot() });
  const parts = [`missing system tools: ${missing.map((entry) => entry.problem).join('; ')}`];
  if (command !== undefined)
    parts.push(`install: ${command}${platform === 'linux' ? ' (Debian/Ubuntu)' : ''}`);
  if (platform === 'darwin' && missing.some((entry) => entry.command === 'bwrap'))
    parts.push('bubblewrap does not exist on macOS: the OS sandbox suites are skipped there');
  parts.push(
    ci
      ? 'CI=true runs every suite, so this is a failure'
      : 'the tests that need them are skipped (CI=true fails instead)',
  );
  return parts.join(' — ');
}

/** Where skipped-test records go for a package directory (the test task's cwd); `AGENT_SKIP_RECORDS` overrides. */
export function skipRecordDirectory(packageDirectory, env = process.env) {
  return (
    env.AGENT_SKIP_RECORDS ?? path.join(packageDirectory, 'node_modules', '.cache', 'agent-skips')
  );
}

/** The skip-record directories of every workspace package under `root` (from pnpm-workspace.yaml). */
export function workspaceSkipRecordDirectories(root) {
  const manifest = readFileSync(path.join(root, 'pnpm-workspace.yaml'), 'utf8');
  const globs = [];
  let inPackages = false;
  for (const line of manifest.split('\n')) {
    if (/^\S/.test(line)) inPackages = /^packages:\s*$/.test(line);
    const entry = inPackages ? /^\s+-\s+["']?([^"'\s#]+)/.exec(line) : null;
    if (entry?.[1] !== undefined) globs.push(entry[1]);
  }
  const directories = globs.flatMap((glob) => {
    if (!glob.endsWith('/*')) return [path.join(root, glob)];
    const parent = path.join(root, glob.slice(0, -2));
    if (!existsSync(parent)) return [];
    return readdirSync(parent, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => path.join(parent, entry.name));
  });
  return directories.map((directory) => skipRecordDirectory(directory, {}));
}

/**
 * Every record in `directories` (`{ file, test, tools, install, reason }`: the test, the tools it
 * lacked, those of them an install would bring, and why), one JSON object per line.
 */
export function readSkipRecords(directories) {
  return directories.flatMap((directory) => {
    if (!existsSync(directory)) return [];
    return readdirSync(directory)
      .filter((name) => name.endsWith('.jsonl'))
      .flatMap((name) =>
        readFileSync(path.join(directory, name), 'utf8')
          .split('\n')
          .filter((line) => line.trim() !== '')
          .map((line) => JSON.parse(line)),
      );
  });
}

/**
 * One line per reason: `skipped 14 tests in 5 files: bubblewrap not installed (sudo apt-get
 * install bubblewrap)`, most tests first. A test recorded twice (a retried file) counts once.
 */
export function summarizeSkips(records, { platform = process.platform, root } = {}) {
  const groups = new Map();
  for (const record of records) {
    const group = groups.get(record.reason) ?? {
      install: record.install ?? [],
      tests: new Set(),
      files: new Set(),
    };
    group.tests.add(`${record.file}\0${record.test}`);
    group.files.add(record.file);
    groups.set(record.reason, group);
  }
  return [...groups]
    .sort(([, a], [, b]) => b.tests.size - a.tests.size)
    .map(([reason, { install, tests, files }]) => {
      const command = installCommand(install, { platform, root: root ?? isRoot() });
      return `skipped ${plural(tests.size, 'test')} in ${plural(files.size, 'file')}: ${reason}${command === undefined ? '' : ` (${command})`}`;
    });
}

function plural(count, noun) {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function platformName(platform) {
  return platform === 'darwin' ? 'macOS' : platform;
}

function isRoot() {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}
