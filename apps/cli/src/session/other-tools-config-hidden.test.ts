// The configuration files of other AI tools hold the user's keys in plain text: MCP servers' `env`
// (Cursor, Windsurf, Claude Desktop, VS Code, Gemini CLI, Codex, Qwen Code, Claude Code), API keys
// (aider, llm, aichat, fabric, goose) and `.env` files inside tool folders (~/.gemini/.env, which
// Gemini CLI reads for GEMINI_API_KEY). A sandboxed command, and the file tools, read none of them.
// Nor more places where tools keep keys and passwords in plain text, which they read before: AI
// tools' configuration (opencode's providers'
// apiKey, Zed's and Kiro's and LM Studio's MCP servers' env, VS Code extensions' stores such as
// Cline's MCP settings, shell_gpt's OPENAI_API_KEY), package managers' stores (`uv auth login`,
// Bundler's gem-server passwords, sbt/ivy credentials, JFrog), cloud and cluster CLIs (Scaleway,
// minikube's client keys, Gitea's tea, influx), wallets' private keys (Solana, Ethereum keystores,
// Foundry), chat and mail clients' tokens and passwords (Slack, Discord, Pidgin, FileZilla,
// msmtp). Real CLI processes, a scripted model, bubblewrap; as root and as nobody.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { anyUserDirectory, nodeForAnyUser, skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, testUsers, writeScript } from '../testing/test-support.js';

beforeAll(assertBuilt);
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** Where each tool keeps a key, relative to the home. */
const files = [
  '.cursor/mcp.json',
  '.codeium/windsurf/mcp_config.json',
  '.config/Claude/claude_desktop_config.json',
  '.config/Code/User/mcp.json',
  '.config/Code/User/settings.json',
  '.gemini/settings.json',
  '.gemini/.env',
  '.codex/config.toml',
  '.qwen/settings.json',
  '.qwen/.env',
  '.claude/settings.json',
  '.aider.conf.yml',
  '.aider/oauth-keys.env',
  '.config/io.datasette.llm/keys.json',
  '.config/aichat/config.yaml',
  '.config/fabric/.env',
  '.config/goose/secrets.yaml',
  '.config/pnpm/rc',
  '.config/npm/npmrc',
  '.config/opencode/opencode.json',
  '.config/zed/settings.json',
  '.kiro/settings/mcp.json',
  '.lmstudio/mcp.json',
  '.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json',
  '.config/VSCodium/User/settings.json',
  '.config/Cursor/User/globalStorage/state.vscdb',
  '.config/shell_gpt/.sgptrc',
  '.config/gptme/config.toml',
  '.local/share/uv/credentials/credentials.toml',
  '.bundle/config',
  '.sbt/.credentials',
  '.ivy2/.credentials',
  '.jfrog/jfrog-cli.conf.v6',
  '.config/scw/config.yaml',
  '.minikube/profiles/minikube/client.key',
  '.config/tea/config.yml',
  '.influxdbv2/configs',
  '.config/solana/id.json',
  '.ethereum/keystore/UTC--2024-01-01T00-00-00Z--abc',
  '.foundry/keystores/deployer',
  '.config/Slack/Cookies',
  '.purple/accounts.xml',
  '.config/filezilla/sitemanager.xml',
  '.msmtprc',
  '.gcm/store/git/https/github.com/user.credential',
  '.subversion/auth/svn.simple/0123abcd',
  '.tea/tea.yml',
  '.docker/machine/certs/key.pem',
  '.lima/_config/user',
  '.smbcredentials',
  '.davfs2/secrets',
  '.vnc/passwd',
  '.config/remmina/remmina.pref',
  '.claude.json.backup',
  '.claude/backups/.claude.json.backup.1764460800000',
  '.claude/projects/-home-me-app/0b7c.jsonl',
  '.codex/sessions/2026/11/30/rollout.jsonl',
  '.codex/history.jsonl',
  '.gemini/tmp/5f3a/chats/session.json',
  '.cache/huggingface/stored_tokens',
  '.docker/contexts/tls/8e1c/docker/key.pem',
  '.talos/config',
  '.local/share/gem/credentials',
  '.config/pdm/config.toml',
  '.rye/credentials',
  '.pub-cache/credentials.json',
  '.config/dart/pub-tokens.json',
  '.hex/hex.config',
  '.ansible/galaxy_token',
  '.modal.toml',
  '.runpod/config.toml',
  '.streamlit/secrets.toml',
  '.ngc/config',
  'clearml.conf',
  '.local/share/jupyter/runtime/jpserver-4242.json',
  '.config/turborepo/config.json',
  '.cloudflared/cert.pem',
  '.twilio-cli/config.json',
  '.config/hut/config',
  '.config/exercism/user.json',
  '.passwd-s3fs',
  '.authinfo',
  '.config/gspread/authorized_user.json',
  '.credentials/sheets.googleapis.com-python.json',
  '.gitlab-runner/config.toml',
  '.config/syncthing/key.pem',
  '.local/state/syncthing/config.xml',
  '.config/code-server/config.yaml',
  '.local/share/lpass/session_privatekey',
  '.vscode-server/data/User/globalStorage/state.vscdb',
  '.cursor-server/data/User/globalStorage/state.vscdb',
  '.config/JetBrains/IntelliJIdea2025.2/c.pwd',
  '.config/fish/fish_variables',
  '.mongodb/mongosh/mongosh_repl_history',
  '.dbshell',
  '.mycli-history',
  '.irb_history',
  '.ipython/profile_default/history.sqlite',
];

const keyOf = (index: number) => `sk-proj-${String(index).padStart(2, '0')}${'Cs7w'.repeat(10)}`;

/**
 * Writes a key into each of `files` (paths in a new folder under /var/tmp: the sandbox's /tmp is
 * private, which would hide them whatever the CLI does) and `control` beside them, then runs a
 * session as `uid` whose bash cats them all and whose read_file reads each; which keys came back.
 */
async function readableOf(
  uid: number | undefined,
  files: readonly string[],
  control: string,
  env: (dir: string) => Record<string, string>,
  setUp: (dir: string) => void = () => undefined,
): Promise<{ readable: string[]; seen: string }> {
  const dir = anyUserDirectory('agent-cli-other-tools-');
  cleanups.push(() => dir.dispose());
  const workspace = join(dir.path, 'ws');
  mkdirSync(workspace, { recursive: true });
  for (const [index, file] of files.entries()) {
    mkdirSync(dirname(join(dir.path, file)), { recursive: true });
    writeFileSync(join(dir.path, file), `api_key = "${keyOf(index)}"\n`, { mode: 0o600 });
  }
  mkdirSync(dirname(join(dir.path, control)), { recursive: true });
  writeFileSync(join(dir.path, control), 'control-visible\n');
  setUp(dir.path);
  const probe = [...files, control]
    .map((file) => `cat '${join(dir.path, file)}' >> seen.txt 2>&1`)
    .join('; ');
  const script = await writeScript(dir.path, [
    {
      toolCalls: [
        { name: 'bash', arguments: { command: probe } },
        ...files.map((file, index) => ({
          id: `read-${index}`,
          name: 'read_file',
          arguments: { path: join(dir.path, file) },
        })),
      ],
    },
    { text: 'done' },
  ]);
  const saved = join(dir.path, 'saved.json');
  const node = join(dir.path, 'node');
  nodeForAnyUser(node);
  if (uid !== undefined) spawnSync('chown', ['-R', `${uid}:${uid}`, dir.path]);
  const run = await runCli(
    [
      ...['-p', 'look around', '--scripted', script, '--cwd', workspace],
      ...['--mode', 'full-access', '--sandbox', 'required', '--save', saved],
    ],
    {
      node,
      uid,
      env: cleanEnv({
        HOME: join(dir.path, 'home'),
        AGENT_HOME: join(dir.path, 'state'),
        TMPDIR: dir.path,
        ...env(dir.path),
      }),
    },
  );
  expect(run.code, run.stderr).toBe(0);
  const seen = readFileSync(join(workspace, 'seen.txt'), 'utf8');
  // The file tools' answers: in the saved conversation (no key of the environment to redact).
  const answers = readFileSync(saved, 'utf8');
  const readable = files.filter(
    (_file, index) => seen.includes(keyOf(index)) || answers.includes(keyOf(index)),
  );
  return { readable, seen };
}

describe.each(testUsers)('other tools’ files with keys, as $label', ({ uid }) => {
  it('are hidden from sandboxed commands and from the file tools', async (context) => {
    skipWithout('bwrap')(context);
    const { readable, seen } = await readableOf(
      uid,
      files.map((file) => `home/${file}`),
      // The folders around them stay readable.
      'home/.config/zed/keymap.json',
      () => ({}),
    );
    expect(readable).toEqual([]);
    expect(seen).toContain('control-visible');
  });

  it('are hidden where XDG_CONFIG_HOME, XDG_DATA_HOME and XDG_CACHE_HOME put them', async (context) => {
    // A user's XDG folders elsewhere than ~/.config, ~/.local/share, ~/.cache: gh's token, gcloud's
    // credentials, the keyrings, uv's store, Hugging Face's token were readable there.
    skipWithout('bwrap')(context);
    const { readable, seen } = await readableOf(
      uid,
      [
        'xdg/config/gh/hosts.yml',
        'xdg/config/gcloud/credentials.db',
        'xdg/config/opencode/opencode.json',
        'xdg/data/keyrings/login.keyring',
        'xdg/data/uv/credentials/credentials.toml',
        'xdg/cache/huggingface/token',
      ],
      'xdg/config/git/config',
      (dir) => ({
        XDG_CONFIG_HOME: join(dir, 'xdg', 'config'),
        XDG_DATA_HOME: join(dir, 'xdg', 'data'),
        XDG_CACHE_HOME: join(dir, 'xdg', 'cache'),
      }),
    );
    expect(readable).toEqual([]);
    expect(seen).toContain('control-visible');
  });

  it('are hidden where a tool’s variable moved its store (KUBECONFIG, DOCKER_CONFIG, GH_CONFIG_DIR…)', async (context) => {
    // The stores' usual places are hidden; a kubeconfig of a cluster kept in ~/work, gh's token
    // under GH_CONFIG_DIR, a pgpass named by PGPASSFILE were readable.
    skipWithout('bwrap')(context);
    const { readable, seen } = await readableOf(
      uid,
      [
        'clusters/prod.yaml',
        'clusters/dev.yaml',
        'docker/config.json',
        'gh/hosts.yml',
        'secrets/pgpass',
        'cargo/credentials.toml',
        'gcloud/credentials.db',
      ],
      'docker/features.json',
      (dir) => ({
        KUBECONFIG: `${join(dir, 'clusters/prod.yaml')}:${join(dir, 'clusters/dev.yaml')}`,
        DOCKER_CONFIG: join(dir, 'docker'),
        GH_CONFIG_DIR: join(dir, 'gh'),
        PGPASSFILE: join(dir, 'secrets/pgpass'),
        CARGO_HOME: join(dir, 'cargo'),
        CLOUDSDK_CONFIG: join(dir, 'gcloud'),
      }),
    );
    expect(readable).toEqual([]);
    expect(seen).toContain('control-visible');
  });

  it('are hidden where more tools’ variables moved their stores (REGISTRY_AUTH_FILE, COMPOSER_HOME, CLAUDE_CONFIG_DIR…)', async (context) => {
    // podman's auth.json, Composer's and Poetry's auth files, pip's config with an index
    // password, Helm's registries, Talos's keys, Bundler's config, Jupyter's runtime, and
    // Claude Code's and Codex's folders moved by their variables were readable.
    skipWithout('bwrap')(context);
    const { readable, seen } = await readableOf(
      uid,
      [
        'podman/auth.json',
        'composer/auth.json',
        'poetry/auth.toml',
        'pip/pip.conf',
        'helm/registry.json',
        'talos/config',
        'bundle/config',
        'jupyter/kernel-1.json',
        'hf/stored_tokens',
        'claude/.credentials.json',
        'claude/projects/-ws/1.jsonl',
        'codex/auth.json',
      ],
      'composer/composer.json',
      (dir) => ({
        REGISTRY_AUTH_FILE: join(dir, 'podman/auth.json'),
        COMPOSER_HOME: join(dir, 'composer'),
        POETRY_CONFIG_DIR: join(dir, 'poetry'),
        PIP_CONFIG_FILE: join(dir, 'pip/pip.conf'),
        HELM_REGISTRY_CONFIG: join(dir, 'helm/registry.json'),
        TALOSCONFIG: join(dir, 'talos/config'),
        BUNDLE_USER_CONFIG: join(dir, 'bundle/config'),
        JUPYTER_RUNTIME_DIR: join(dir, 'jupyter'),
        HF_HOME: join(dir, 'hf'),
        CLAUDE_CONFIG_DIR: join(dir, 'claude'),
        CODEX_HOME: join(dir, 'codex'),
      }),
    );
    expect(readable).toEqual([]);
    expect(seen).toContain('control-visible');
  });

  it('are hidden in the environment files of the projects beside the workspace', async (context) => {
    // `.env*` above the workspace and in the home were hidden; another project's `.env` beside it
    // (~/code/other/.env), a `prod.env` above it, and Wrangler's `.dev.vars` were read.
    skipWithout('bwrap')(context);
    const { readable, seen } = await readableOf(
      uid,
      ['other/.env', 'other/.env.production', 'prod.env', 'home/site/.dev.vars'],
      'other/README',
      () => ({}),
    );
    expect(readable).toEqual([]);
    expect(seen).toContain('control-visible');
  });

  it('are hidden where git’s store helper keeps them (helper = store --file …)', async (context) => {
    // ~/.git-credentials was hidden; a store the user's .gitconfig moved was read.
    skipWithout('bwrap')(context);
    const { readable, seen } = await readableOf(
      uid,
      ['secrets/git-credentials'],
      'secrets/README',
      () => ({}),
      (dir) => {
        mkdirSync(join(dir, 'home'), { recursive: true });
        writeFileSync(
          join(dir, 'home', '.gitconfig'),
          '[credential]\n\thelper = store --file ~/../secrets/git-credentials\n',
        );
      },
    );
    expect(readable).toEqual([]);
    expect(seen).toContain('control-visible');
  });

  it('are hidden where a file the git configuration includes names a store', async (context) => {
    // Only the top files were read: a store named in a file ~/.gitconfig includes (in turn, or
    // under includeIf), or in the repository's own .git/config, was read.
    skipWithout('bwrap')(context);
    const { readable, seen } = await readableOf(
      uid,
      ['secrets/work-credentials', 'secrets/deep-credentials', 'secrets/repo-credentials'],
      'secrets/README',
      () => ({}),
      (dir) => {
        mkdirSync(join(dir, 'home', 'git'), { recursive: true });
        writeFileSync(
          join(dir, 'home', '.gitconfig'),
          '[include]\n\tpath = git/work.inc\n[includeIf "gitdir:/"]\n\tpath = ~/git/other.inc\n',
        );
        writeFileSync(
          join(dir, 'home', 'git', 'work.inc'),
          '[credential]\n\thelper = store --file ~/../secrets/work-credentials\n',
        );
        writeFileSync(join(dir, 'home', 'git', 'other.inc'), '[include]\n\tpath = deep.inc\n');
        writeFileSync(
          join(dir, 'home', 'git', 'deep.inc'),
          `[credential]\n\thelper = "store --file=${join(dir, 'secrets', 'deep-credentials')}"\n`,
        );
        spawnSync('git', ['init', '-q', join(dir, 'ws')]);
        spawnSync('git', [
          ...['-C', join(dir, 'ws'), 'config', 'credential.helper'],
          `store --file ${join(dir, 'secrets', 'repo-credentials')}`,
        ]);
      },
    );
    expect(readable).toEqual([]);
    expect(seen).toContain('control-visible');
  });
});
