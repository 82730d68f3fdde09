import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { gitConfigFiles, gitConfigWithoutCredentials } from './git-config-credentials.js';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function temporary(): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'git-config-credentials-')));
  made.push(dir);
  return dir;
}

/** What real git reads from `text`: `key=value` lines. */
function gitList(text: string): string[] {
  const file = path.join(temporary(), 'config');
  fs.writeFileSync(file, text);
  const run = spawnSync('git', ['config', '--file', file, '--list'], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(run.stderr);
  return run.stdout.trim().split('\n');
}

const token = `ghs_${'Ab3d'.repeat(9)}`;
const basic = Buffer.from(`x-access-token:${token}`).toString('base64');

describe('gitConfigWithoutCredentials', () => {
  it.each([
    [
      'an extraheader with basic credentials',
      `[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic ${basic}\n`,
      'http.https://github.com/.extraheader=AUTHORIZATION: basic ***',
      [`basic ${basic}`, basic, `x-access-token:${token}`, token],
    ],
    [
      'an extraheader with a bearer token',
      '[http]\n\textraHeader = "Authorization: Bearer abc123def456ghi789"\n',
      'http.extraheader=Authorization: Bearer ***',
      ['Bearer abc123def456ghi789', 'abc123def456ghi789'],
    ],
    [
      'a token as the user of an insteadOf base',
      `[url "https://ghp_${'Zz9y'.repeat(9)}@github.com/"]\n\tinsteadOf = https://github.com/\n`,
      'url.https://***@github.com/.insteadof=https://github.com/',
      [`ghp_${'Zz9y'.repeat(9)}`],
    ],
    [
      'a remote URL with a password',
      '[remote "origin"]\n\turl = https://bob:s3cr%40t@example.com/p.git\n',
      'remote.origin.url=https://bob:***@example.com/p.git',
      ['s3cr%40t', 's3cr@t'],
    ],
    [
      'a proxy with a password',
      '[http]\n\tproxy = http://me:pr0xyPass@proxy:3128\n',
      'http.proxy=http://me:***@proxy:3128',
      ['pr0xyPass'],
    ],
    [
      'an inline helper that prints a password',
      '[credential]\n\thelper = "!f() { echo username=bob; echo password=hunter2; }; f"\n',
      'credential.helper=***',
      ['!f() { echo username=bob; echo password=hunter2; }; f', 'hunter2'],
    ],
    [
      "sendemail's password, whatever it looks like",
      '[sendemail]\n\tsmtpPass = letmein ; a comment\n',
      'sendemail.smtppass=***',
      ['letmein'],
    ],
    [
      'a key of a known format under any name',
      `[hub]\n\tsomething = glpat-${'Qw2e'.repeat(5)}\n`,
      'hub.something=***',
      [`glpat-${'Qw2e'.repeat(5)}`],
    ],
  ])('hides %s', (_name, text, shown, secrets) => {
    const result = gitConfigWithoutCredentials(text);
    expect(gitList(result.text)).toContain(shown);
    expect(new Set(result.secrets)).toEqual(new Set(secrets));
    for (const secret of secrets) expect(result.text).not.toContain(secret);
  });

  it('leaves a configuration without credentials as it is', () => {
    const text = [
      '[core]',
      '\trepositoryformatversion = 0',
      '\tsshCommand = ssh -i ~/.ssh/id_work',
      '[remote "origin"]',
      '\turl = https://github.com/org/app.git',
      '\tpushurl = git@github.com:org/app.git',
      '[remote "mirror"]',
      '\turl = https://deploy@dev.azure.com/org/app',
      '[http]',
      '\textraheader = X-Trace: on',
      '\tsslCertPasswordProtected = true',
      '[user]',
      '\tsigningkey = 3AA5C34371567BD2',
      '[credential]',
      '\thelper = store --file ~/.secrets/git',
      '\thelper = !/usr/bin/gh auth git-credential',
      '',
    ].join('\n');
    expect(gitConfigWithoutCredentials(text)).toEqual({ text, secrets: [] });
  });

  it('keeps the line count of a value continued over lines', () => {
    const text = `[sendemail]\n\tsmtpPass = first\\\n-second\n[core]\n\tbare = false\n`;
    const result = gitConfigWithoutCredentials(text);
    expect(result.secrets).toEqual(['first-second']);
    expect(result.text.split('\n')).toHaveLength(text.split('\n').length);
    expect(gitList(result.text)).toEqual(['sendemail.smtppass=***', 'core.bare=false']);
  });
});

describe('gitConfigFiles', () => {
  it("finds the user's files, the repository's (a worktree's common one too), and what they include", () => {
    const dir = temporary();
    const home = path.join(dir, 'home');
    const main = path.join(dir, 'main');
    const worktree = path.join(dir, 'wt', 'sub');
    fs.mkdirSync(home);
    fs.mkdirSync(path.join(main, '.git', 'worktrees', 'wt'), { recursive: true });
    fs.mkdirSync(worktree, { recursive: true });
    fs.writeFileSync(path.join(main, '.git', 'config'), '[include]\n\tpath = ../../shared.inc\n');
    fs.writeFileSync(path.join(dir, 'shared.inc'), '');
    fs.writeFileSync(path.join(main, '.git', 'worktrees', 'wt', 'commondir'), '../..\n');
    fs.writeFileSync(path.join(main, '.git', 'worktrees', 'wt', 'config.worktree'), '');
    fs.writeFileSync(path.join(dir, 'wt', '.git'), `gitdir: ${main}/.git/worktrees/wt\n`);
    fs.writeFileSync(
      path.join(home, '.gitconfig'),
      '[includeIf "gitdir:~/x/"]\n\tpath = ~/ci.inc\n',
    );
    fs.writeFileSync(path.join(home, 'ci.inc'), '');
    const files = gitConfigFiles({
      // A root below the worktree's top: its repository is found above it.
      roots: [worktree],
      home,
      env: { GIT_CONFIG_SYSTEM: path.join(dir, 'none') },
    });
    expect(files.sort()).toEqual(
      [
        path.join(home, '.gitconfig'),
        path.join(home, 'ci.inc'),
        path.join(main, '.git', 'config'),
        path.join(main, '.git', 'worktrees', 'wt', 'config.worktree'),
        path.join(dir, 'shared.inc'),
      ].sort(),
    );
  });
});
