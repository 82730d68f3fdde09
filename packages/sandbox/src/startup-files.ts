import * as fs from 'node:fs';
import * as path from 'node:path';
import { isInside } from './real-paths.js';

/**
 * What the user's own programs run or obey later, outside the sandbox, relative to the home
 * directory: shell startup files (a line appended to `.bashrc` runs in the user's next shell),
 * the user's git and ssh configuration (`core.fsmonitor`, `ProxyCommand`), package-manager
 * configuration (`script-shell`, `onload-script`), editors and terminal multiplexers that run
 * their configuration, what runs at login (systemd user units, desktop autostart, environment.d),
 * and the per-user `bin` directories on `PATH` (a `git` planted there shadows the real one).
 * Only reached when a writable root holds them (the home, or `~/.config` as a dotfiles
 * repository): otherwise they are read-only inside with the rest of the home.
 */
export const homeStartupFiles: readonly string[] = [
  // Shells.
  '.profile',
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.bash_logout',
  '.bashrc.d',
  '.zshenv',
  '.zshrc',
  '.zprofile',
  '.zlogin',
  '.zlogout',
  '.oh-my-zsh',
  '.config/fish',
  '.kshrc',
  '.mkshrc',
  '.cshrc',
  '.tcshrc',
  '.login',
  '.logout',
  '.inputrc',
  '.config/nushell',
  '.config/starship.toml',
  // zsh with ZDOTDIR (its .zshrc lives there), and other shells' configuration folders.
  '.config/zsh',
  '.zsh',
  '.config/bash',
  '.config/powershell',
  '.xonshrc',
  '.config/xonsh',
  '.config/elvish',
  // Git, ssh, package managers.
  '.gitconfig',
  '.config/git',
  '.ssh/config',
  '.ssh/rc',
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.config/direnv',
  '.local/share/direnv/allow',
  // Editors and terminal multiplexers that run their configuration.
  '.vimrc',
  '.vim',
  '.exrc',
  '.config/nvim',
  '.emacs',
  '.emacs.d',
  '.tmux.conf',
  '.config/tmux',
  '.screenrc',
  '.wezterm.lua',
  '.config/wezterm',
  '.config/kitty',
  // Interpreters, debuggers and database clients that run their startup files (`!`, `.shell`,
  // `system()`): the user's next `gdb`, `ipython`, `psql`, `R` or `irb` would.
  '.gdbinit',
  '.config/gdb',
  '.lldbinit',
  '.ipython',
  '.pythonrc',
  '.pythonrc.py',
  '.pdbrc',
  '.irbrc',
  '.pryrc',
  '.Rprofile',
  '.julia/config',
  '.ghci',
  '.psqlrc',
  '.sqliterc',
  '.myclirc',
  // What runs at login.
  '.xprofile',
  '.xinitrc',
  '.xsession',
  '.xsessionrc',
  '.pam_environment',
  '.config/environment.d',
  '.config/systemd/user',
  '.config/autostart',
  // Window managers and desktops that run commands from their configuration at login.
  '.config/plasma-workspace/env',
  '.config/i3',
  '.config/sway',
  '.config/hypr',
  '.config/openbox',
  // Programs found on PATH before the system's.
  'bin',
  '.local/bin',
  // Per-user code that interpreters and build tools load at every start: Python's user site (a
  // `.pth` line runs at each `python` start; `usercustomize`), cargo's env script (sourced by
  // `.profile`), configuration (`build.rustc-wrapper`) and bin on PATH, Go's bin, Gradle's init
  // scripts, the `.mavenrc` that `mvn` sources, mise's global configuration (trusted: its hooks
  // and `_.source` run), the version managers' scripts the shells source.
  '.local/lib',
  '.cargo/env',
  '.cargo/config.toml',
  '.cargo/config',
  '.cargo/bin',
  'go/bin',
  '.gradle/init.d',
  '.gradle/init.gradle',
  '.gradle/init.gradle.kts',
  '.mavenrc',
  '.config/mise',
  '.nvm/nvm.sh',
  '.asdf/asdf.sh',
  '.sdkman/bin',
  '.ghcup/env',
  '.bun/bin',
  '.deno/bin',
  '.volta/bin',
  // Editors' user settings (terminal profiles, interpreters, tasks) and the servers and
  // extensions a remote or local editor runs (the home's own `.vscode` is an auto-run folder).
  '.config/Code/User',
  '.config/Code - Insiders/User',
  '.config/VSCodium/User',
  '.config/Cursor/User',
  '.vscode-server',
  '.vscode-server-insiders',
  '.vscode-oss',
  '.cursor',
  '.cursor-server',
  '.windsurf',
  '.windsurf-server',
  '.config/JetBrains',
  // Configuration that writes or uploads files, or runs programs, when the user next runs the
  // tool: curl's and wget's (`output`, `upload-file`), docker's CLI plugins (run to list them).
  '.curlrc',
  '.wgetrc',
  '.docker/cli-plugins',
  // What the desktop opens files and links with.
  '.local/share/applications',
  '.config/mimeapps.list',
  '.mailcap',
];

/**
 * The startup files of `home` ({@link homeStartupFiles}) that exist now and lie strictly inside a
 * writable root — the home, or a folder of it such as `~/.config` kept as a dotfiles repository —
 * to bind read-only over themselves (see {@link existingTargetsInside}).
 */
export function startupFilesToProtect(home: string, writableRoots: readonly string[]): string[] {
  return existingTargetsInside(
    homeStartupFiles.map((relative) => path.join(home, relative)),
    writableRoots,
  );
}

/**
 * Those of `entries` that exist now, by real path, that lie strictly inside a writable root. A
 * symbolic link (a dotfile manager's) is resolved: the mount lands on its target, which is kept
 * when it lies inside a root; a dangling one is left (nothing a mount could land on).
 */
export function existingTargetsInside(
  entries: readonly string[],
  writableRoots: readonly string[],
): string[] {
  const paths = new Set<string>();
  for (const entry of entries) {
    if (fs.lstatSync(entry, { throwIfNoEntry: false }) === undefined) continue;
    let target: string;
    try {
      target = fs.realpathSync(entry);
    } catch {
      continue;
    }
    // Strictly inside: a workspace that is itself one (`~/.config/nvim` as the project) is the
    // user's chosen work, and stays writable.
    if (writableRoots.some((root) => root !== target && isInside(root, target))) paths.add(target);
  }
  return [...paths];
}
