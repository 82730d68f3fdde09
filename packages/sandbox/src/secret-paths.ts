import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isInside } from './real-paths.js';

/**
 * Credentials, keys and tokens of the current user that sandboxed processes must not read, by
 * where the usual tools keep them (paths under `home`), and for root {@link systemSecretPaths}
 * too. Only the ones that exist are hidden, each at a small cost per command (a mount), so the
 * list names files and directories that hold secrets — not whole configuration trees a tool
 * needs to run.
 */
export function defaultSecretPaths(
  home = os.homedir(),
  env: Readonly<Record<string, string | undefined>> = process.env,
): string[] {
  return [
    ...homeSecretPaths(home, env),
    ...(process.getuid?.() === 0 ? systemSecretPaths(home) : []),
  ];
}

/**
 * The XDG base directories a user may have moved, and where each is by default: a tool following
 * XDG keeps `~/.config/gh/hosts.yml` in `$XDG_CONFIG_HOME/gh/hosts.yml` when that is set (only an
 * absolute value counts, as the specification says).
 */
const xdgDirectories = [
  { variable: 'XDG_CONFIG_HOME', under: '.config/' },
  { variable: 'XDG_DATA_HOME', under: '.local/share/' },
  { variable: 'XDG_CACHE_HOME', under: '.cache/' },
] as const;

function homeSecretPaths(
  home: string,
  env: Readonly<Record<string, string | undefined>>,
): string[] {
  const entries = homeSecretEntries();
  const paths = entries.map((entry) => path.join(home, entry));
  for (const { variable, under } of xdgDirectories) {
    const moved = env[variable];
    if (moved === undefined || !path.isAbsolute(moved)) continue;
    if (path.resolve(moved) === path.join(home, under.slice(0, -1))) continue;
    for (const entry of entries)
      if (entry.startsWith(under)) paths.push(path.join(moved, entry.slice(under.length)));
  }
  return paths;
}

/** The credential stores under the home, relative to it. */
function homeSecretEntries(): string[] {
  return [
    // Keys and agents.
    '.ssh',
    '.gnupg',
    '.pki', // NSS databases: client certificates' private keys
    '.password-store', // pass
    '.local/share/keyrings', // GNOME keyring files
    '.local/share/kwalletd', // KWallet
    '.config/op', // 1Password CLI
    '.vault-token',
    // Cloud CLIs.
    '.aws',
    '.azure',
    '.config/gcloud',
    '.oci',
    '.config/doctl',
    '.config/hcloud',
    '.config/linode-cli',
    '.aliyun',
    '.bluemix',
    '.fly',
    '.config/rclone',
    '.s3cfg',
    '.boto',
    '.mc/config.json', // MinIO client
    '.config/configstore', // tokens of Node CLIs (firebase-tools, …)
    '.config/netlify',
    '.netlify',
    '.vercel',
    '.local/share/com.vercel.cli',
    '.wrangler',
    '.config/.wrangler',
    '.config/ngrok',
    '.ngrok2',
    '.terraform.d/credentials.tfrc.json',
    '.config/scw/config.yaml', // Scaleway's secret key
    // Containers and clusters.
    '.kube',
    '.docker/config.json',
    '.config/containers/auth.json',
    '.config/helm/repositories.yaml',
    '.config/helm/registry',
    '.minikube', // client keys of its clusters (profiles/*/client.key)
    '.docker/machine', // docker-machine's client keys
    '.lima/_config', // the SSH key of Lima's (and Colima's) VMs
    '.docker/contexts/tls', // docker contexts' client keys
    '.talos', // Talos clusters' client keys
    // Git hosts and git credential stores.
    '.git-credentials',
    '.config/git/credentials',
    '.cache/git/credential',
    '.gcm', // Git Credential Manager's plain-text store (credential.credentialStore=plaintext)
    '.subversion/auth', // svn's saved passwords
    '.config/gh',
    '.config/hub',
    '.config/glab-cli',
    '.config/github-copilot',
    '.config/tea', // Gitea's CLI: tokens per login
    '.tea', // tea before it moved to ~/.config
    '.netrc',
    // Package registries.
    '.npmrc',
    '.config/npm/npmrc', // npm's user config where XDG is followed
    '.config/pnpm/rc', // pnpm's global .npmrc: registry auth tokens
    '.yarnrc',
    '.yarnrc.yml',
    '.config/pip',
    '.pip',
    '.pypirc',
    '.config/pypoetry/auth.toml',
    '.gem/credentials',
    '.m2/settings.xml',
    '.m2/settings-security.xml',
    '.gradle/gradle.properties',
    '.cargo/credentials',
    '.cargo/credentials.toml',
    '.nuget/NuGet/NuGet.Config',
    '.composer/auth.json',
    '.config/composer/auth.json',
    '.local/share/uv/credentials', // `uv auth login`: a plain-text store
    '.bundle/config', // Bundler: a gem server's user:password (BUNDLE_<HOST>)
    '.sbt/.credentials',
    '.ivy2/.credentials',
    '.jfrog', // JFrog CLI: its servers' tokens
    '.local/share/gem/credentials', // RubyGems' API keys where it follows XDG
    '.config/pdm/config.toml', // PDM: repositories' passwords
    '.rye/credentials', // rye publish's token
    '.pub-cache/credentials.json', // dart pub's OAuth tokens
    '.config/dart/pub-credentials.json',
    '.config/dart/pub-tokens.json',
    '.hex/hex.config', // Elixir's Hex API key
    '.ansible/galaxy_token',
    // Databases.
    '.pgpass',
    '.my.cnf',
    '.mylogin.cnf',
    // Other agents' own credentials (and Claude Code's state file: its MCP servers' env).
    '.claude/.credentials.json',
    '.claude.json',
    '.codex/auth.json',
    '.gemini/oauth_creds.json',
    '.qwen/oauth_creds.json',
    '.local/share/opencode/auth.json',
    '.continue', // config.json / config.yaml with API keys
    '.claude.json.backup', // the same as .claude.json (MCP servers' env)
    '.claude/backups',
    // Other agents' transcripts of every project: what their tools printed (keys included).
    '.claude/projects',
    '.codex/sessions',
    '.codex/history.jsonl',
    '.gemini/tmp',
    // Other AI tools' configuration: MCP servers' `env` with keys, API keys, `.env` files of their own.
    '.cursor/mcp.json',
    '.codeium/windsurf/mcp_config.json',
    '.config/Claude/claude_desktop_config.json',
    '.config/Code/User/mcp.json',
    '.config/Code/User/settings.json', // its `mcp.servers` entries and extensions' keys
    '.gemini/settings.json',
    '.gemini/.env', // Gemini CLI reads GEMINI_API_KEY from it
    '.codex/config.toml',
    '.qwen/settings.json',
    '.qwen/.env',
    '.claude/settings.json', // its `env` (ANTHROPIC_API_KEY, MCP tokens)
    '.aider.conf.yml',
    '.aider/oauth-keys.env',
    '.config/io.datasette.llm/keys.json', // llm
    '.config/aichat/config.yaml',
    '.config/fabric/.env',
    '.config/goose/secrets.yaml',
    '.config/opencode/opencode.json', // providers' apiKey, MCP servers' env
    '.config/opencode/opencode.jsonc',
    '.config/zed/settings.json', // its context servers' env
    '.kiro/settings/mcp.json',
    '.lmstudio/mcp.json',
    '.config/Code/User/globalStorage', // extensions' stores: Cline's and Roo's MCP settings, secrets
    '.config/Code - Insiders/User/mcp.json',
    '.config/Code - Insiders/User/settings.json',
    '.config/Code - Insiders/User/globalStorage',
    '.config/VSCodium/User/mcp.json',
    '.config/VSCodium/User/settings.json',
    '.config/VSCodium/User/globalStorage',
    '.config/Cursor/User/globalStorage',
    '.config/Windsurf/User/globalStorage',
    '.vscode-server/data/User/globalStorage', // the same on a remote (SSH, containers, WSL)
    '.cursor-server/data/User/globalStorage',
    '.config/JetBrains', // IDEs' saved passwords without a keyring (c.kdbx and c.pwd)
    '.config/shell_gpt/.sgptrc', // its OPENAI_API_KEY
    '.config/gptme/config.toml', // API keys in its [env]
    '.config/mods/mods.yml',
    // Data and ML platforms.
    '.cache/huggingface/token',
    '.cache/huggingface/stored_tokens', // every token `hf auth login` saved
    '.huggingface/token',
    '.kaggle/kaggle.json',
    '.databrickscfg',
    '.snowflake/connections.toml',
    '.dbt/profiles.yml',
    '.ollama/id_ed25519', // the key ollama.com knows this machine by
    '.modal.toml', // Modal's token id and secret
    '.runpod', // RunPod's API key
    '.streamlit/secrets.toml', // Streamlit's global secrets
    '.ngc/config', // NVIDIA NGC's API key
    'clearml.conf', // ClearML's access and secret keys
    '.local/share/jupyter/runtime', // running kernels' HMAC keys, Jupyter servers' tokens
    // Other services' CLI tokens and private keys.
    '.pulumi/credentials.json',
    '.terraformrc',
    '.config/sops/age/keys.txt',
    '.config/stripe/config.toml',
    '.supabase/access-token',
    '.railway',
    '.config/doppler',
    '.circleci/cli.yml',
    '.sentryclirc',
    '.wakatime.cfg',
    '.influxdbv2/configs', // influx CLI's tokens
    '.expo/state.json', // Expo's session secret
    '.config/turborepo/config.json', // `turbo login`'s token
    '.cloudflared', // cert.pem (the account's tunnel token) and tunnels' credentials
    '.twilio-cli', // its API keys
    '.config/hut', // sourcehut's token
    '.config/exercism/user.json', // its token
    '.passwd-s3fs', // s3fs's access keys
    '.authinfo', // Emacs auth-source's passwords in plain text
    '.config/gspread', // Google Sheets OAuth tokens
    '.credentials', // Google API clients' saved OAuth tokens
    '.gitlab-runner/config.toml', // a runner's tokens
    '.config/syncthing', // the device's private key and the GUI's API key
    '.local/state/syncthing',
    '.config/code-server/config.yaml', // code-server's login password
    '.local/share/lpass', // LastPass CLI's session
    '.lpass',
    // Wallets' private keys.
    '.config/solana', // id.json: the default keypair
    '.ethereum/keystore',
    '.foundry/keystores', // cast wallet
    '.gitcookies',
    '.tsh', // Teleport
    '.config/Bitwarden CLI',
    '.bunfig.toml',
    // Browser and mail profiles (cookies and saved passwords).
    '.mozilla',
    '.thunderbird',
    'snap/firefox',
    '.config/google-chrome',
    '.config/chromium',
    '.config/BraveSoftware',
    '.config/microsoft-edge',
    '.config/vivaldi',
    '.config/Slack', // its session cookie and tokens
    '.config/discord',
    '.config/Signal', // config.json: the key of its database
    '.purple', // Pidgin: accounts.xml holds passwords in plain text
    '.config/filezilla', // saved sites' passwords
    '.msmtprc',
    '.config/msmtp',
    '.fetchmailrc',
    '.smbcredentials', // a CIFS mount's password
    '.davfs2/secrets',
    '.vnc/passwd',
    '.config/remmina', // remmina.pref: the key its saved passwords are encrypted with
    '.local/share/remmina',
    // Shell and client histories: pasted tokens and passwords end up there.
    '.bash_history',
    '.zsh_history',
    '.histfile',
    '.local/share/fish/fish_history',
    '.config/fish/fish_variables', // universal variables: `set -Ux GITHUB_TOKEN …`
    '.psql_history',
    '.mysql_history',
    '.rediscli_history',
    '.python_history',
    '.node_repl_history',
    '.sqlite_history',
    '.mongodb', // mongosh's history and its connection strings
    '.dbshell',
    '.mycli-history',
    '.irb_history',
    '.ipython/profile_default/history.sqlite',
    '.local/share/atuin', // shell history (and its sync key)
  ];
}

/**
 * System files only root can read — password hashes, host keys, TLS keys, a cluster's admin
 * credentials — hidden when the sandbox is created by root (whose commands would otherwise read
 * them: root inside is the owner). For an ordinary user the file permissions already do it.
 */
export function systemSecretPaths(home = os.homedir()): string[] {
  return [
    '/etc/shadow',
    '/etc/shadow-',
    '/etc/gshadow',
    '/etc/gshadow-',
    '/etc/security/opasswd',
    '/etc/ssh/ssh_host_dsa_key',
    '/etc/ssh/ssh_host_ecdsa_key',
    '/etc/ssh/ssh_host_ed25519_key',
    '/etc/ssh/ssh_host_rsa_key',
    '/etc/ssl/private',
    '/etc/letsencrypt',
    '/etc/pki/tls/private',
    '/etc/krb5.keytab',
    '/etc/wireguard',
    '/etc/NetworkManager/system-connections', // Wi-Fi and VPN secrets
    '/etc/netplan', // Wi-Fi passwords
    '/etc/wpa_supplicant',
    '/etc/ipsec.secrets',
    '/etc/ppp/chap-secrets',
    '/etc/ppp/pap-secrets',
    '/etc/mysql/debian.cnf', // the maintenance user's password
    '/var/lib/tailscale', // the node's private keys
    '/etc/kubernetes',
    '/etc/rancher',
    '/var/lib/rancher/k3s/server', // k3s: the join token and the cluster's CA keys
    '/var/lib/kubelet/pki',
    '/etc/gitlab-runner', // runners' tokens
    '/etc/openvpn', // client keys, auth-user-pass files
    '/var/lib/zerotier-one/identity.secret',
    '/etc/ldap.secret',
    '/etc/libnss-ldap.secret',
    '/etc/pam_ldap.secret',
    '/var/lib/samba/private', // Samba's password database
    '/etc/postfix/sasl_passwd',
    '/etc/postfix/sasl_passwd.db',
    '/etc/ssmtp/ssmtp.conf', // AuthPass
    '/etc/msmtprc',
    '/etc/davfs2/secrets',
    '/etc/passwd-s3fs',
    '/etc/ceph/ceph.client.admin.keyring',
    '/var/lib/cloud', // cloud-init's user-data: what the machine was given at boot, secrets too
    '/var/lib/docker', // every container's environment (config.v2.json) and file system
    '/var/lib/containers', // podman's: the same, and its secrets
    // root's own home, when the sandbox's home is another one.
    ...(path.resolve(home) === '/root' ? [] : ['/root']),
  ];
}

/**
 * Whether a file or folder name is an environment file's: `.env*` (`.env`, `.env.local`,
 * `.envrc`, `.envs/`), `*.env` (`prod.env`, a compose file's `env_file`), or Cloudflare
 * Wrangler's `.dev.vars*` — files of variables, keys among them.
 */
function isEnvironmentFileName(name: string): boolean {
  return (
    name.startsWith('.env') ||
    (name.endsWith('.env') && name.length > 4) ||
    name.startsWith('.dev.vars')
  );
}

/**
 * Environment files ({@link isEnvironmentFileName}) in `home`, in every directory above a
 * workspace root — a monorepo's root, the folder above a checkout — and in each folder beside
 * those (one level down from each: the other projects of `~/code`, the other packages of a
 * monorepo, which hold keys of their own). Those inside a root are the project's own and stay
 * readable.
 */
export function environmentFilePaths(options: {
  roots: readonly string[];
  home: string;
}): string[] {
  const directories = new Set<string>([options.home]);
  const above = new Set<string>();
  for (const root of options.roots) {
    let directory = path.dirname(root);
    for (;;) {
      directories.add(directory);
      above.add(directory);
      const parent = path.dirname(directory);
      if (parent === directory) break;
      directory = parent;
    }
  }
  const holdsRoot = (entry: string) => options.roots.some((root) => isInside(entry, root));
  const temporary = sharedTemporaryFolders();
  for (const directory of [...above, options.home]) {
    // What lies beside a workspace in a shared temporary folder is other programs' scratch, made
    // and removed at any time: one listed here and removed before a command's sandbox starts
    // would make that start fail (bwrap cannot make the mask's mount point on a read-only parent).
    if (temporary.has(directory)) continue;
    for (const entry of entriesOf(directory)) {
      const beside = path.join(directory, entry.name);
      if (entry.isDirectory() && !holdsRoot(beside) && !temporary.has(beside))
        directories.add(beside);
    }
  }
  const found: string[] = [];
  for (const directory of directories)
    for (const entry of entriesOf(directory))
      if (isEnvironmentFileName(entry.name)) found.push(path.join(directory, entry.name));
  return found;
}

/**
 * /tmp, /var/tmp and /dev/shm, as named and by real path (not TMPDIR: a user's or a tool's own
 * folder, which may well hold their projects).
 */
function sharedTemporaryFolders(): Set<string> {
  const folders = new Set<string>();
  for (const folder of ['/tmp', '/var/tmp', '/dev/shm']) {
    folders.add(path.resolve(folder));
    try {
      folders.add(fs.realpathSync(folder));
    } catch {
      // Not on this system.
    }
  }
  return folders;
}

function entriesOf(directory: string): fs.Dirent[] {
  try {
    return fs.readdirSync(directory, { withFileTypes: true });
  } catch {
    return []; // Unreadable to us: unreadable to the command as well.
  }
}

/** A secret path as the sandbox hides it: an empty directory, or an empty file. */
export interface SecretMask {
  path: string;
  directory: boolean;
}

/**
 * Which of `candidates` exist and must be hidden, by real path (a secret reached through a
 * symlink is hidden where the mount really lands), leaving out those under another hidden
 * directory, and any that is a writable root or holds one: a workspace the user chose stays
 * whole. A secret inside a workspace (the workspace is the home directory) is still hidden.
 */
export function secretMasks(
  candidates: readonly string[],
  writableRoots: readonly string[],
): SecretMask[] {
  const masks = new Map<string, SecretMask>();
  for (const candidate of candidates) {
    // Most candidates do not exist: one stat that does not throw decides (this runs per command).
    let real: string;
    let directory: boolean;
    try {
      const stat = fs.statSync(candidate, { throwIfNoEntry: false });
      if (stat === undefined) continue; // Missing (or a dangling link): nothing to hide.
      real = fs.realpathSync(candidate);
      directory = stat.isDirectory();
    } catch {
      continue; // Not reachable by us (ENOTDIR, EACCES), or removed meanwhile.
    }
    if (writableRoots.some((root) => isInside(real, root))) continue;
    masks.set(real, { path: real, directory });
  }
  const ordered = [...masks.values()].sort((a, b) => a.path.length - b.path.length);
  return ordered.filter(
    (mask) =>
      !ordered.some(
        (other) => other !== mask && other.directory && isInside(other.path, mask.path),
      ),
  );
}
