/**
 * Files the user's credential variables point to. `GOOGLE_APPLICATION_CREDENTIALS` names a service
 * account's key file, `AWS_WEB_IDENTITY_TOKEN_FILE` and `AZURE_FEDERATED_TOKEN_FILE` a token,
 * `SSH_KEY_PATH` or `TLS_KEY_FILE` a private key, systemd's `CREDENTIALS_DIRECTORY` a folder of
 * them. The variable is withheld from the tools, but the file was not: wherever it lay outside the
 * known credential stores (`~/Downloads/project-123.json`, `/var/run/secrets/…`) a sandboxed
 * `cat` gave its content to the model. Each such path is hidden like a credential store.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { credentialNameRules, harmlessVariableNames } from '@agent/core/credentials';
import { gitConfigFiles } from '@agent/sandbox';
import { isPathInside } from '@agent/tools-builtin';

// A path and nothing else (as core's redactor reads one): `/…`, `~/…`, `./…`, `../…`.
const plainPath = /^(?:~|\.{0,2})\/[\w./-]*$/;
// One with other characters (`~/My Keys/sa.json`, `/secrets/app@prod.json`) counts where it names
// something that exists: a key of that shape is no file.
const otherPath = /^(?:~|\.{0,2})\/[^\0\n\r]*$/;

/**
 * The paths held by variables of `env` that a name rule calls credentials (not those `pass`
 * names: the user hands them to the tools), resolved (`~` the home, a relative one against `cwd`)
 * — never `/`, the home, or a folder that holds `cwd`: those would hide the workspace itself.
 */
export function credentialFilePaths(
  env: Readonly<Record<string, string | undefined>>,
  options: { cwd: string; pass?: readonly string[]; home?: string },
): string[] {
  const home = options.home ?? homedir();
  const pass = new Set(options.pass ?? []);
  const found = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || pass.has(name) || harmlessVariableNames.includes(name)) continue;
    if (!otherPath.test(value)) continue;
    const upper = name.toUpperCase();
    if (!credentialNameRules.some((rule) => rule.pattern.test(upper))) continue;
    const path = value.startsWith('~/')
      ? resolve(home, value.slice(2))
      : resolve(options.cwd, value);
    if (!plainPath.test(value) && !existsSync(path)) continue;
    if (path === resolve('/') || path === resolve(home) || isPathInside(path, options.cwd))
      continue;
    found.add(path);
  }
  for (const path of toolStorePaths(env, { cwd: options.cwd, pass, home })) found.add(path);
  for (const path of gitCredentialStores(env, home, options.cwd))
    if (!isPathInside(path, options.cwd)) found.add(path);
  return [...found].sort();
}

/**
 * The files git's `store` helper keeps passwords in where the user's git configuration moves them
 * (`helper = store --file ~/secrets/git-credentials`): the default `~/.git-credentials` is hidden
 * by the sandbox's list, a moved one was read by a sandboxed `cat` (or `git credential fill`).
 * Read from every git configuration file git reads there (`@agent/sandbox`'s `gitConfigFiles`:
 * the system's, `GIT_CONFIG_GLOBAL` or `~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`, the
 * repository of `cwd`), and every file those include — a store named in `~/.gitconfig-work`,
 * which `~/.gitconfig` includes, was read before.
 */
export function gitCredentialStores(
  env: Readonly<Record<string, string | undefined>>,
  home: string,
  cwd?: string,
): string[] {
  const files = gitConfigFiles({ roots: cwd === undefined ? [] : [cwd], home, env });
  const found: string[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const [, argument] of text.matchAll(
      /^\s*helper\s*=\s*"?(?:git-credential-)?store\b[^\n]*?--file(?:=|\s+)("[^"\n]+"|[^\s"]+)/gim,
    )) {
      const path = (argument ?? '').replace(/^"|"$/g, '');
      if (path === '') continue;
      found.push(path.startsWith('~/') ? resolve(home, path.slice(2)) : resolve(home, path));
    }
  }
  return found;
}

/**
 * Variables that move a tool's credential store (by upper-cased name), and what of the path it
 * names holds the keys: `.` the path itself (a file, or a folder of keys), else files in that
 * folder. The stores' usual places are hidden by the sandbox's own list; moved, they were not:
 * `KUBECONFIG=~/work/prod.yaml` (a client key), `GH_CONFIG_DIR`'s hosts.yml, `PGPASSFILE`…
 */
const storeVariables: Readonly<Record<string, readonly string[]>> = {
  KUBECONFIG: ['.'], // a list, `:` between paths
  CLOUDSDK_CONFIG: ['.'],
  AZURE_CONFIG_DIR: ['.'],
  GNUPGHOME: ['.'],
  PASSWORD_STORE_DIR: ['.'],
  PGPASSFILE: ['.'],
  RCLONE_CONFIG: ['.'],
  BOTO_CONFIG: ['.'],
  AWS_CONFIG_FILE: ['.'],
  TF_CLI_CONFIG_FILE: ['.'],
  NPM_CONFIG_USERCONFIG: ['.'],
  DOCKER_CERT_PATH: ['.'],
  DOCKER_CONFIG: ['config.json'],
  GH_CONFIG_DIR: ['hosts.yml'],
  CARGO_HOME: ['credentials', 'credentials.toml'],
  GRADLE_USER_HOME: ['gradle.properties'],
  KAGGLE_CONFIG_DIR: ['kaggle.json'],
  HF_HOME: ['token', 'stored_tokens'],
  REGISTRY_AUTH_FILE: ['.'], // podman, skopeo, buildah
  HELM_REGISTRY_CONFIG: ['.'],
  HELM_REPOSITORY_CONFIG: ['.'],
  TALOSCONFIG: ['.'],
  OCI_CLI_CONFIG_FILE: ['.'],
  MINIKUBE_HOME: ['.'],
  PIP_CONFIG_FILE: ['.'], // an index URL with a password
  BUNDLE_USER_CONFIG: ['.'],
  BUNDLE_USER_HOME: ['config'],
  COMPOSER_HOME: ['auth.json'],
  POETRY_CONFIG_DIR: ['auth.toml'],
  JUPYTER_RUNTIME_DIR: ['.'],
  // Other agents' folders moved: their tokens, MCP servers' env, transcripts.
  CLAUDE_CONFIG_DIR: ['.credentials.json', '.claude.json', 'settings.json', 'projects', 'backups'],
  CODEX_HOME: ['auth.json', 'config.toml', 'sessions', 'history.jsonl'],
};

/** The credential stores `env`'s store variables name (see {@link storeVariables}). */
function toolStorePaths(
  env: Readonly<Record<string, string | undefined>>,
  options: { cwd: string; pass: ReadonlySet<string>; home: string },
): string[] {
  const found: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    const upper = name.toUpperCase();
    if (!Object.hasOwn(storeVariables, upper) || value === undefined || options.pass.has(name))
      continue;
    const held = storeVariables[upper] ?? [];
    for (const entry of upper === 'KUBECONFIG' ? value.split(':') : [value]) {
      if (entry === '') continue;
      const place = entry.startsWith('~/')
        ? resolve(options.home, entry.slice(2))
        : resolve(options.cwd, entry);
      for (const file of held) {
        const path = file === '.' ? place : resolve(place, file);
        // Never the root, the home, or a folder that holds the workspace.
        if (path === resolve('/') || path === resolve(options.home)) continue;
        if (!isPathInside(path, options.cwd)) found.push(path);
      }
    }
  }
  return found;
}
