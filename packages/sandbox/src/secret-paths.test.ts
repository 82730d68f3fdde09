import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  defaultSecretPaths,
  environmentFilePaths,
  secretMasks,
  systemSecretPaths,
} from './secret-paths.js';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'secret-paths-')));
  made.push(root);
  for (const [file, text] of Object.entries(files)) {
    const full = path.join(root, file);
    fs.mkdirSync(path.dirname(full), { recursive: true });
    if (file.endsWith('/')) fs.mkdirSync(full, { recursive: true });
    else fs.writeFileSync(full, text);
  }
  return root;
}

describe('defaultSecretPaths', () => {
  it.each([
    '.ssh',
    '.aws',
    '.config/gcloud',
    '.netrc',
    '.gnupg',
    '.kube',
    '.docker/config.json',
    '.config/git/credentials',
    '.git-credentials',
    '.npmrc',
    '.yarnrc.yml',
    '.config/pip',
    '.gem/credentials',
    '.m2/settings.xml',
    '.config/hub',
    '.cargo/credentials.toml',
    '.password-store',
    '.mozilla',
    '.config/google-chrome',
    '.pgpass',
    '.vault-token',
    '.bash_history',
    '.claude.json',
    '.gemini/oauth_creds.json',
    '.cache/huggingface/token',
    '.kaggle/kaggle.json',
    '.databrickscfg',
    '.pulumi/credentials.json',
    '.config/sops/age/keys.txt',
    '.gitcookies',
    '.local/share/atuin',
    '.cursor/mcp.json',
    '.gemini/.env',
    '.config/Claude/claude_desktop_config.json',
    '.config/pnpm/rc',
    '.local/share/uv/credentials',
    '.bundle/config',
    '.config/opencode/opencode.json',
    '.config/Code/User/globalStorage',
    '.config/solana',
    '.minikube',
    '.claude/projects',
    '.cache/huggingface/stored_tokens',
    '.config/fish/fish_variables',
    '.local/share/jupyter/runtime',
    '.cloudflared',
    '.authinfo',
  ])('covers ~/%s', (entry) => {
    expect(defaultSecretPaths('/home/me')).toContain(`/home/me/${entry}`);
  });

  it('follows XDG base directories moved elsewhere (absolute values only)', () => {
    const paths = defaultSecretPaths('/home/me', {
      XDG_CONFIG_HOME: '/home/me/dotfiles/config',
      XDG_DATA_HOME: '/srv/me/data',
      XDG_CACHE_HOME: 'relative/cache',
    });
    expect(paths).toEqual(
      expect.arrayContaining([
        '/home/me/.config/gh',
        '/home/me/dotfiles/config/gh',
        '/home/me/dotfiles/config/gcloud',
        '/srv/me/data/keyrings',
        '/srv/me/data/uv/credentials',
      ]),
    );
    expect(paths.filter((entry) => entry.startsWith('relative'))).toEqual([]);
    expect(paths).not.toContain('/home/me/dotfiles/config/.ssh');
    expect(defaultSecretPaths('/home/me', { XDG_CONFIG_HOME: '/home/me/.config' })).toEqual(
      defaultSecretPaths('/home/me', {}),
    );
  });

  it('adds the system secrets for root only', () => {
    const paths = defaultSecretPaths('/root');
    if (process.getuid?.() === 0) expect(paths).toContain('/etc/shadow');
    else expect(paths).not.toContain('/etc/shadow');
  });

  it('leaves out whole configuration trees tools need', () => {
    const paths = defaultSecretPaths('/home/me');
    for (const entry of ['.config', '.docker', '.cargo', '.m2', '.gradle', '.cache', '.local']) {
      expect(paths).not.toContain(`/home/me/${entry}`);
    }
  });
});

describe('systemSecretPaths', () => {
  it('covers password hashes and host keys, and /root when the home is elsewhere', () => {
    expect(systemSecretPaths('/root')).toEqual(
      expect.arrayContaining([
        '/etc/shadow',
        '/etc/gshadow',
        '/etc/ssh/ssh_host_ed25519_key',
        '/etc/krb5.keytab',
        '/etc/wireguard',
        '/etc/NetworkManager/system-connections',
        '/var/lib/tailscale',
        '/var/lib/cloud',
        '/var/lib/docker',
        '/etc/gitlab-runner',
        '/etc/postfix/sasl_passwd',
      ]),
    );
    expect(systemSecretPaths('/root')).not.toContain('/root');
    expect(systemSecretPaths('/home/ci')).toContain('/root');
  });
});

describe('environmentFilePaths', () => {
  it('finds environment files in the home, above each root and beside those, never inside a root', () => {
    const base = tree({
      'home/.env': 'x',
      'home/.envrc': 'x',
      'home/not-env': 'x',
      'home/site/.dev.vars': 'x',
      'mono/.env': 'x',
      'mono/.env.local': 'x',
      'mono/.envs/prod': 'x',
      'mono/env': 'x',
      'mono/prod.env': 'x',
      'mono/packages/.env.production': 'x',
      'mono/packages/app/.env': 'x',
      'mono/packages/app/src/.env': 'x',
      'mono/packages/lib/.env': 'x',
      'mono/packages/lib/src/.env': 'x',
      'other/.env': 'x',
      'other/deeper/.env': 'x',
    });
    const found = environmentFilePaths({
      roots: [path.join(base, 'mono/packages/app')],
      home: path.join(base, 'home'),
    });
    expect(found.sort()).toEqual(
      [
        'home/.env',
        'home/.envrc',
        'home/site/.dev.vars',
        'mono/.env',
        'mono/.env.local',
        'mono/.envs',
        'mono/packages/.env.production',
        'mono/packages/lib/.env',
        'mono/prod.env',
        'other/.env',
      ]
        .map((entry) => path.join(base, entry))
        .sort(),
    );
  });

  it("leaves out what lies beside a workspace in a shared temporary folder (other programs' scratch)", () => {
    const inVarTmp = (files: string[]): string => {
      const root = fs.realpathSync(fs.mkdtempSync('/var/tmp/secret-paths-'));
      made.push(root);
      for (const file of files) {
        fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
        fs.writeFileSync(path.join(root, file), 'x');
      }
      return root;
    };
    const base = inVarTmp(['ws/app/.env', 'ws/.env', 'ws/beside/.env']);
    const other = inVarTmp(['.env', 'prod.env']);
    const found = environmentFilePaths({
      roots: [path.join(base, 'ws/app')],
      home: '/nonexistent/home',
    });
    // Above the root and beside it within the workspace's own folder: still found.
    expect(found).toEqual(
      expect.arrayContaining([path.join(base, 'ws/.env'), path.join(base, 'ws/beside/.env')]),
    );
    // Another folder in the temporary folder: a test's, a build's, removed at any moment.
    expect(found.filter((entry) => entry.startsWith(other))).toEqual([]);
  });

  it('skips directories it cannot read', () => {
    expect(
      environmentFilePaths({ roots: ['/nonexistent/a/b'], home: '/nonexistent/home' }),
    ).toEqual(expect.not.arrayContaining(['/nonexistent/home/.env']));
  });
});

describe('secretMasks', () => {
  it('keeps what exists, as directory or file, by real path', () => {
    const base = tree({ 'home/.ssh/id': 'k', 'home/.netrc': 'p', 'keys/real/id': 'k' });
    fs.symlinkSync(path.join(base, 'keys/real'), path.join(base, 'home/.aws'));
    const masks = secretMasks(
      ['.ssh', '.netrc', '.aws', '.missing'].map((entry) => path.join(base, 'home', entry)),
      [],
    );
    expect(masks).toEqual(
      expect.arrayContaining([
        { path: path.join(base, 'home/.ssh'), directory: true },
        { path: path.join(base, 'home/.netrc'), directory: false },
        { path: path.join(base, 'keys/real'), directory: true },
      ]),
    );
    expect(masks).toHaveLength(3);
  });

  it('hides a secret inside a workspace, but never the workspace itself or what holds it', () => {
    const base = tree({ 'home/.ssh/id': 'k', 'home/.config/gcloud/creds': 'c' });
    const home = path.join(base, 'home');
    const inside = secretMasks([path.join(home, '.ssh')], [home]);
    expect(inside).toEqual([{ path: path.join(home, '.ssh'), directory: true }]);
    expect(secretMasks([path.join(home, '.ssh')], [path.join(home, '.ssh')])).toEqual([]);
    expect(secretMasks([home], [path.join(home, '.config/gcloud')])).toEqual([]);
  });

  it('leaves out a secret under another hidden directory', () => {
    const base = tree({ 'home/.config/gh/hosts.yml': 'x', 'home/.config/gh/extra/': '' });
    const masks = secretMasks(
      [path.join(base, 'home/.config/gh/hosts.yml'), path.join(base, 'home/.config/gh')],
      [],
    );
    expect(masks).toEqual([{ path: path.join(base, 'home/.config/gh'), directory: true }]);
  });
});
