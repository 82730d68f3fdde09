// The copies of files a sandbox shows in their place, without the credentials they hold: git
// configuration files (git-config-credentials.ts) and shell startup files
// (startup-file-credentials.ts) — files the tools need, so not hidden whole. Each copy is
// written once per content and bound read-only over the original.
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
import {
  startupFilesWithVariables,
  startupFileWithoutCredentials,
} from './startup-file-credentials.js';

/** A file shown as another: `copy` bound read-only over `path`. */
export interface ReplacedFile {
  path: string;
  copy: string;
}

/** A file that holds credentials, with its text as shown and the credentials left out. */
export interface FileCredentials {
  /** The file, by real path. */
  file: string;
  /** Its text with `***` for each credential. */
  text: string;
  /** The credentials (see `gitConfigWithoutCredentials`, `startupFileWithoutCredentials`). */
  secrets: string[];
}

/**
 * The git configuration files ({@link gitConfigFiles}) and shell startup files
 * ({@link startupFilesWithVariables}) around `places` that hold credentials now.
 */
export function credentialsInSharedFiles(places: GitConfigPlaces): FileCredentials[] {
  const filters = [
    ...gitConfigFiles(places).map((file) => ({ file, filter: gitConfigWithoutCredentials })),
    ...startupFilesWithVariables(places.home, places.env).map((file) => ({
      file,
      filter: startupFileWithoutCredentials,
    })),
  ];
  const found: FileCredentials[] = [];
  for (const { file, filter } of filters) {
    const text = readConfig(file);
    if (text === undefined) continue;
    const filtered = filter(text);
    if (filtered.secrets.length > 0) found.push({ file, ...filtered });
  }
  return found;
}

/** The credential-free copies of the files around a sandbox's roots. */
export interface CredentialFreeCopies {
  /** The files that hold credentials now, each with its copy (written when new). */
  current(): ReplacedFile[];
  /** Removes the copies. */
  dispose(): void;
}

/**
 * Copies of the files {@link credentialsInSharedFiles} finds in `places()`, looked up anew at
 * each {@link CredentialFreeCopies.current} (a token a CI step writes later is covered too). A
 * copy's name is its content's hash: the same content, the same mount (a long-lived sandbox is
 * kept while its mounts stay the same).
 */
export function credentialFreeCopies(places: () => GitConfigPlaces): CredentialFreeCopies {
  let directory: string | undefined;
  return {
    current() {
      const replaced: ReplacedFile[] = [];
      for (const { file, text } of credentialsInSharedFiles(places())) {
        const shown = `${text}${text.endsWith('\n') ? '' : '\n'}# The agent's sandbox shows this file with its credentials as ***.\n`;
        if (directory === undefined) {
          directory = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sandbox-copies-'));
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
