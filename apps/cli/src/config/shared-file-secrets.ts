/**
 * Credentials in files the tools need and the sandbox therefore shows as copies without them
 * (`@agent/sandbox`'s `credentialsInSharedFiles`): a CI token in `.git/config`
 * (actions/checkout's `extraheader`, a remote's `https://user:token@…`), one in `~/.gitconfig` or
 * a file it includes, an `export OPENAI_API_KEY=…` in `~/.bashrc`. The file tools read the files
 * themselves (a workspace that is the home holds `.bashrc`), and an unsandboxed command does too,
 * so each tool result (and the session file) is redacted of them as of the CLI's own credentials.
 */
import { homedir } from 'node:os';
import { relative } from 'node:path';
import { credentialsInSharedFiles, findRepositories } from '@agent/sandbox';

/** The credentials of the shared files around `cwd`, named for `redactAlso` after their file. */
export function sharedFileRedactions(cwd: string): Record<string, string> {
  const home = homedir();
  const found = credentialsInSharedFiles({
    roots: [cwd],
    // Nested repositories and submodules (actions/checkout sets their extraheader too).
    repositories: findRepositories([cwd]).paths,
    home,
    env: process.env,
  });
  const named: Record<string, string> = {};
  for (const { file, secrets } of found) {
    const inHome = relative(home, file);
    const shown = inHome.startsWith('..') ? file : `~/${inHome}`;
    for (const [index, secret] of secrets.entries()) named[`${shown} secret ${index + 1}`] = secret;
  }
  return named;
}
