/**
 * Credentials the git configuration around the workspace holds — a CI token in `.git/config`
 * (actions/checkout's `extraheader`, a remote's `https://user:token@…`, a `url.….insteadOf` with
 * a token), one in `~/.gitconfig` or a file it includes. The sandbox shows those files without
 * them; the file tools read the files themselves, so each tool result (and the session file) is
 * redacted of them as of the CLI's own credentials.
 */
import { homedir } from 'node:os';
import { findRepositories, gitConfigSecrets } from '@agent/sandbox';

/** The credentials of the git configuration files around `cwd`, named for `redactAlso`. */
export function gitConfigRedactions(cwd: string): Record<string, string> {
  const secrets = gitConfigSecrets({
    roots: [cwd],
    // Nested repositories and submodules (actions/checkout sets their extraheader too).
    repositories: findRepositories([cwd]).paths,
    home: homedir(),
    env: process.env,
  });
  return Object.fromEntries(
    secrets.map((secret, index) => [`git config secret ${index + 1}`, secret]),
  );
}
