// Tools that run what a project file of theirs says, beyond the package runners: a trusted hook
// `pre-commit run --all-files` runs each `entry` of `.pre-commit-config.yaml`, `mise run lint`
// the task mise.toml (or `mise-tasks/lint`) defines and every `[env] _.source` script, `.tool-
// versions`' `node path:./x` as its node. The command line names none of those files: a
// sandboxed command rewrote one, and the next hook ran it as the user, outside the sandbox (mise's
// own trust is by path, not content: a trusted mise.toml changed is not asked about again).
import { readdirSync } from 'node:fs';
import { basename, delimiter, join } from 'node:path';

/** mise's configuration at a project root, in the places it reads it, and `.tool-versions`. */
const miseSettings = [
  'mise.toml',
  '.mise.toml',
  'mise.local.toml',
  '.mise.local.toml',
  'mise/config.toml',
  '.mise/config.toml',
  '.config/mise.toml',
  '.config/mise/config.toml',
  '.config/mise/conf.d/',
  '.tool-versions',
];

/**
 * What a version manager's shim reads in the folder it runs in, for every program it stands for:
 * with mise's (or asdf's) `shims` folder on PATH, a hook's plain `node` reads `.tool-versions` —
 * `node path:./x` runs `./x/bin/node` — and mise.toml's `[env]`. A PATH entry named `shims`
 * (mise, asdf, pyenv, rbenv) counts; the files as the project root has them, each there or not.
 */
export function shimSettingsFiles(path: string | undefined): string[] {
  const shims = (path ?? '').split(delimiter).some((entry) => basename(entry) === 'shims');
  return shims ? miseSettings.filter((name) => !name.endsWith('/')) : [];
}

const miseConfig = [
  ...miseSettings,
  // File tasks (`mise run lint` → `mise-tasks/lint`).
  'mise-tasks/',
  '.mise-tasks/',
  'mise/tasks/',
  '.mise/tasks/',
  '.config/mise/tasks/',
];

/**
 * The project files each tool reads for what it runs, by program name; a name ending in `/` is a
 * folder whose every file counts. Python's project runners build and install the project from
 * `pyproject.toml` (a `[tool.uv.sources]` path, a build backend) and run its scripts; `.env` is
 * what pipenv and direnv's `dotenv` load into the environment (`NODE_OPTIONS`, `PYTHONPATH`);
 * cargo's `.cargo/config.toml` sets a `rustc-wrapper` and aliases, and `rust-toolchain.toml` a
 * toolchain `path` that rustup runs for `cargo`.
 */
export const toolRunnerFiles: Record<string, readonly string[]> = {
  'pre-commit': ['.pre-commit-config.yaml', '.pre-commit-config.yml'],
  mise: miseConfig,
  direnv: ['.envrc', '.env'],
  tox: ['tox.ini', 'tox.toml'],
  nox: ['noxfile.py'],
  task: [
    'Taskfile.yml',
    'Taskfile.yaml',
    'taskfile.yml',
    'taskfile.yaml',
    'Taskfile.dist.yml',
    'Taskfile.dist.yaml',
  ],
  uv: ['pyproject.toml', 'uv.toml'],
  uvx: ['uv.toml'],
  poetry: ['pyproject.toml', 'poetry.toml'],
  pipenv: ['Pipfile', '.env'],
  pdm: ['pyproject.toml', 'pdm.toml'],
  hatch: ['pyproject.toml', 'hatch.toml'],
  cargo: ['.cargo/config.toml', '.cargo/config', 'rust-toolchain.toml', 'rust-toolchain'],
};

/**
 * The paths `name` (of a runner's list) stands for under `root`: itself, or a folder and its files
 * (the folder's own stat changes when a file is made there: hook-file-pins.ts looks again).
 */
export function runnerPaths(root: string, name: string): string[] {
  if (!name.endsWith('/')) return [join(root, name)];
  const folder = join(root, name);
  try {
    return [
      folder,
      ...readdirSync(folder, { withFileTypes: true })
        .filter((entry) => !entry.isDirectory())
        .map((entry) => join(folder, entry.name))
        .sort(),
    ];
  } catch {
    return [folder];
  }
}
