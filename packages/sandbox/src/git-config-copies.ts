// The copies of git configuration files a sandbox shows in their place (see
// git-config-credentials.ts): written once per content, bound read-only over the original.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { removeAtExit, removeNow } from './exit-cleanup.js';
import {
  type GitConfigPlaces,
  gitConfigFiles,
  gitConfigWithoutCredentials,
} from './git-config-credentials.js';
import { readConfig } from './git-config-includes.js';

/** A file shown as another: `copy` bound read-only over `path`. */
export interface ReplacedFile {
  path: string;
  copy: string;
}

/** The credential-free copies of the git configuration files around a sandbox's roots. */
export interface GitConfigCopies {
  /** The files that hold credentials now, each with its copy (written when new). */
  current(): ReplacedFile[];
  /** Removes the copies. */
  dispose(): void;
}

/**
 * Copies of the files {@link gitConfigFiles} finds in `places()` that hold credentials, looked up
 * anew at each {@link GitConfigCopies.current} (a token a CI step writes later is covered too).
 * A copy's name is its content's hash: the same content, the same mount (a long-lived sandbox is
 * kept while its mounts stay the same).
 */
export function gitConfigCopies(places: () => GitConfigPlaces): GitConfigCopies {
  let directory: string | undefined;
  return {
    current() {
      const replaced: ReplacedFile[] = [];
      for (const file of gitConfigFiles(places())) {
        const text = readConfig(file);
        if (text === undefined) continue;
        const filtered = gitConfigWithoutCredentials(text);
        if (filtered.secrets.length === 0) continue;
        const shown = `${filtered.text}${filtered.text.endsWith('\n') ? '' : '\n'}# The agent's sandbox shows this file with its credentials as ***.\n`;
        if (directory === undefined) {
          directory = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sandbox-git-config-'));
          removeAtExit(directory);
        }
        const copy = path.join(
          directory,
          createHash('sha256').update(shown).digest('hex').slice(0, 32),
        );
        // Written again when anything changed it since (the directory may lie in a writable root).
        if (readConfig(copy) !== shown) {
          fs.rmSync(copy, { force: true });
          fs.writeFileSync(copy, shown, { mode: 0o444, flag: 'wx' });
        }
        replaced.push({ path: file, copy });
      }
      return replaced;
    },
    dispose() {
      if (directory !== undefined) removeNow(directory);
      directory = undefined;
    },
  };
}
