import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { credentialFilePaths, gitCredentialStores } from './credential-files.js';

const options = { cwd: '/home/me/project', home: '/home/me' };

describe('credentialFilePaths', () => {
  it('takes the paths of variables named as credentials: absolute, in the home, relative', () => {
    expect(
      credentialFilePaths(
        {
          GOOGLE_APPLICATION_CREDENTIALS: '/home/me/Downloads/project-123.json',
          AWS_WEB_IDENTITY_TOKEN_FILE: '/var/run/secrets/eks.amazonaws.com/serviceaccount/token',
          SSH_KEY_PATH: '~/keys/deploy',
          TLS_KEY_FILE: './certs/server.key',
          CREDENTIALS_DIRECTORY: '/run/credentials/app.service',
        },
        options,
      ),
    ).toEqual([
      '/home/me/Downloads/project-123.json',
      '/home/me/keys/deploy',
      '/home/me/project/certs/server.key',
      '/run/credentials/app.service',
      '/var/run/secrets/eks.amazonaws.com/serviceaccount/token',
    ]);
  });

  it('leaves out other names, values that are no path, passed variables and harmless names', () => {
    expect(
      credentialFilePaths(
        {
          SSL_CERT_FILE: '/etc/ssl/cert.pem',
          OPENAI_API_KEY: 'sk-not-a-path',
          DATABASE_PASSWORD: 'hunter2/with/slashes but spaces',
          GOOGLE_APPLICATION_CREDENTIALS: '/home/me/sa.json',
          TIKTOKEN_CACHE_DIR: '/home/me/.cache/tiktoken',
        },
        { ...options, pass: ['GOOGLE_APPLICATION_CREDENTIALS'] },
      ),
    ).toEqual([]);
  });

  it('takes the stores that tool variables move: the path, or the key files in the folder', () => {
    const env = {
      KUBECONFIG: '/work/prod.yaml::~/clusters/dev.yaml',
      DOCKER_CONFIG: '/srv/docker',
      GH_CONFIG_DIR: '~/gh',
      npm_config_userconfig: '/etc/team/npmrc',
      CARGO_HOME: '/opt/cargo',
      PGPASSFILE: 'secrets/pgpass',
      // A file in a folder that holds the workspace is hidden; the folder itself never.
      HF_HOME: '/home/me/ws/..',
      GNUPGHOME: '/',
      AZURE_CONFIG_DIR: '/home',
    };
    expect(credentialFilePaths(env, { cwd: '/home/me/ws', home: '/home/me' })).toEqual([
      '/etc/team/npmrc',
      '/home/me/clusters/dev.yaml',
      '/home/me/gh/hosts.yml',
      '/home/me/stored_tokens',
      '/home/me/token',
      '/home/me/ws/secrets/pgpass',
      '/opt/cargo/credentials',
      '/opt/cargo/credentials.toml',
      '/srv/docker/config.json',
      '/work/prod.yaml',
    ]);
    expect(
      credentialFilePaths(env, { cwd: '/home/me/ws', home: '/home/me', pass: ['KUBECONFIG'] }),
    ).not.toContain('/work/prod.yaml');
  });

  it('never the root, the home, or a folder that holds the workspace', () => {
    expect(
      credentialFilePaths(
        { SECRETS_DIR: '/', MY_SECRET_HOME: '~/', CREDS_ROOT: '/home/me', SECRET_TREE: '..' },
        { ...options, cwd: '/home/me/project/app' },
      ),
    ).toEqual([]);
  });

  it('a path with other characters (a space) when it names a file that exists, not otherwise', () => {
    const home = mkdtempSync(join(tmpdir(), 'agent-cli-credential-files-'));
    try {
      mkdirSync(join(home, 'My Keys'));
      writeFileSync(join(home, 'My Keys', 'sa.json'), '{}');
      expect(
        credentialFilePaths(
          {
            GOOGLE_APPLICATION_CREDENTIALS: '~/My Keys/sa.json',
            DEPLOY_KEY_FILE: '~/My Keys/missing one.pem',
            API_SECRET: '/a+b/c d==',
          },
          { cwd: join(home, 'project'), home },
        ),
      ).toEqual([join(home, 'My Keys', 'sa.json')]);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('gitCredentialStores', () => {
  it("reads store --file from the user's git configuration files", () => {
    const home = mkdtempSync(join(tmpdir(), 'agent-git-stores-'));
    try {
      mkdirSync(join(home, '.config', 'git'), { recursive: true });
      writeFileSync(
        join(home, '.gitconfig'),
        '[credential]\n\thelper = store --file ~/secrets/git-creds\n\thelper = cache\n',
      );
      writeFileSync(
        join(home, '.config', 'git', 'config'),
        '[credential "https://example.com"]\n  helper = "store --file=/srv/creds store"\n',
      );
      expect(gitCredentialStores({}, home)).toEqual([
        join(home, 'secrets', 'git-creds'),
        '/srv/creds',
      ]);
      expect(gitCredentialStores({ GIT_CONFIG_GLOBAL: join(home, 'none') }, home)).toEqual([
        '/srv/creds',
      ]);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("follows includes, and reads the repository's own configuration", () => {
    const home = mkdtempSync(join(tmpdir(), 'agent-git-stores-'));
    try {
      mkdirSync(join(home, 'repo', '.git'), { recursive: true });
      writeFileSync(join(home, '.gitconfig'), '[includeIf "gitdir:~/repo/"]\n\tpath = work.inc\n');
      writeFileSync(join(home, 'work.inc'), '[credential]\n\thelper = store --file ~/work-creds\n');
      writeFileSync(
        join(home, 'repo', '.git', 'config'),
        '[credential]\n\thelper = store --file /srv/repo-creds\n',
      );
      const env = { GIT_CONFIG_SYSTEM: join(home, 'none') };
      expect(gitCredentialStores(env, home, join(home, 'repo'))).toEqual([
        join(home, 'work-creds'),
        '/srv/repo-creds',
      ]);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
