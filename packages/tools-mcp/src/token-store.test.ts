// The file token store of `agent mcp login` (and every HTTP server with `oauth`) against what can
// be planted in its directory: symlinks at the file or at a staging name, a FIFO, a corrupt file,
// a file others can write, a directory others can write. Real files in a private temp dir.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fileTokenStore } from './token-store.js';

const root = mkdtempSync(join(tmpdir(), 'mcp-token-store-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let count = 0;
/** A fresh private directory (0700) for one case. */
function folder(): string {
  count += 1;
  const dir = join(root, `case-${count}`);
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

const auth = (token: string) => ({ tokens: { access_token: token, token_type: 'Bearer' } });

describe('fileTokenStore: what it writes', () => {
  it('a regular 0600 file, whatever the umask, in a 0700 directory it creates', async () => {
    const path = join(folder(), 'home', 'mcp-tokens.json');
    const before = process.umask(0);
    try {
      await fileTokenStore(path).save('github', auth('secret-a'));
    } finally {
      process.umask(before);
    }
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(path, '..')).mode & 0o777).toBe(0o700);
    expect(lstatSync(path).isFile()).toBe(true);
  });

  it('keeps every server, and leaves no staging file behind', async () => {
    const dir = folder();
    const path = join(dir, 'mcp-tokens.json');
    const store = fileTokenStore(path);
    await store.save('github', auth('secret-a'));
    await store.save('jira', auth('secret-b'));
    await store.save('github', auth('secret-c'));
    expect((await store.load('github'))?.tokens?.access_token).toBe('secret-c');
    expect((await store.load('jira'))?.tokens?.access_token).toBe('secret-b');
    expect(readdirSync(dir)).toEqual(['mcp-tokens.json']);
  });

  it('a server named like an Object property is kept as any other', async () => {
    const store = fileTokenStore(join(folder(), 'mcp-tokens.json'));
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      expect(await store.load(name), name).toBeUndefined();
      await store.save(name, auth(`secret-${name}`));
      expect((await store.load(name))?.tokens?.access_token, name).toBe(`secret-${name}`);
    }
  });
});

describe('fileTokenStore: what is planted beside it', () => {
  it('a symlink at any staging name it could use is never written through', async () => {
    const dir = folder();
    const path = join(dir, 'mcp-tokens.json');
    const outside = join(folder(), 'attacker-reads-this');
    writeFileSync(outside, '');
    chmodSync(outside, 0o666);
    // The names a staging file has had (pid-based), and a spread of others beside them.
    for (const name of [
      `mcp-tokens.json.${process.pid}.tmp`,
      `mcp-tokens.json.tmp`,
      `.mcp-tokens.json.tmp`,
    ])
      symlinkSync(outside, join(dir, name));
    await fileTokenStore(path).save('github', auth('secret-a'));
    expect(readFileSync(outside, 'utf8')).toBe('');
    expect(statSync(outside).mode & 0o777).toBe(0o666);
    expect(lstatSync(path).isFile()).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('a symlink at the file itself is neither read nor written through', async () => {
    const dir = folder();
    const path = join(dir, 'mcp-tokens.json');
    const planted = join(folder(), 'planted.json');
    writeFileSync(planted, JSON.stringify({ github: auth('attacker-token') }), { mode: 0o600 });
    symlinkSync(planted, path);
    const store = fileTokenStore(path);
    await expect(store.load('github')).rejects.toThrow(
      `The MCP token file ${path} is a symlink, not a regular file`,
    );
    await expect(store.save('github', auth('secret-a'))).rejects.toThrow(path);
    expect(readFileSync(planted, 'utf8')).not.toContain('secret-a');
  });

  it('a FIFO at the file fails at once instead of holding the sign-in for ever', async () => {
    const dir = folder();
    const path = join(dir, 'mcp-tokens.json');
    execFileSync('mkfifo', ['-m', '600', path]);
    const store = fileTokenStore(path);
    await expect(store.load('github')).rejects.toThrow(
      `The MCP token file ${path} is a fifo, not a regular file`,
    );
    await expect(store.save('github', auth('secret-a'))).rejects.toThrow(path);
  });

  it.each([
    ['not JSON', '{"github": {"tokens": '],
    ['an array', '[1, 2]'],
    ['null', 'null'],
    ['a string', '"tokens"'],
  ])(
    'a file holding %s is refused by name, not replaced (it may hold other servers)',
    async (_label, text) => {
      const path = join(folder(), 'mcp-tokens.json');
      writeFileSync(path, text, { mode: 0o600 });
      const store = fileTokenStore(path);
      await expect(store.load('github')).rejects.toThrow(`The MCP token file ${path}`);
      await expect(store.save('github', auth('secret-a'))).rejects.toThrow(path);
      expect(readFileSync(path, 'utf8')).toBe(text);
    },
  );

  it.each(['0620', '0602', '0666', '0622'])(
    'a file of mode %s (others could have written its tokens) is refused',
    async (mode) => {
      const path = join(folder(), 'mcp-tokens.json');
      writeFileSync(path, JSON.stringify({ github: auth('attacker-token') }));
      chmodSync(path, Number.parseInt(mode, 8));
      await expect(fileTokenStore(path).load('github')).rejects.toThrow(
        `The MCP token file ${path} can be written by others`,
      );
    },
  );

  it('a file others may read (an old 0644 one) is read, and written back 0600', async () => {
    const path = join(folder(), 'mcp-tokens.json');
    writeFileSync(path, JSON.stringify({ jira: auth('secret-b') }));
    chmodSync(path, 0o644);
    const store = fileTokenStore(path);
    expect((await store.load('jira'))?.tokens?.access_token).toBe('secret-b');
    await store.save('github', auth('secret-a'));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect((await store.load('jira'))?.tokens?.access_token).toBe('secret-b');
  });

  it.each(['0777', '0773', '0703'])(
    'a directory of mode %s (others could swap the file) is refused',
    async (mode) => {
      const dir = folder();
      chmodSync(dir, Number.parseInt(mode, 8));
      const path = join(dir, 'mcp-tokens.json');
      await expect(fileTokenStore(path).save('github', auth('secret-a'))).rejects.toThrow(
        `The MCP token file's directory ${dir} can be written by others`,
      );
      expect(existsSync(path)).toBe(false);
    },
  );

  it('a directory as the file is refused by name', async () => {
    const path = join(folder(), 'mcp-tokens.json');
    mkdirSync(path);
    await expect(fileTokenStore(path).load('github')).rejects.toThrow(
      `The MCP token file ${path} is a directory, not a regular file`,
    );
  });
});

describe('fileTokenStore: saves at the same time', () => {
  it('twenty stores (runs) saving different servers at once keep all twenty', async () => {
    const dir = folder();
    const path = join(dir, 'mcp-tokens.json');
    const names = Array.from({ length: 20 }, (_, index) => `server-${index}`);
    await Promise.all(names.map((name) => fileTokenStore(path).save(name, auth(`secret-${name}`))));
    const store = fileTokenStore(path);
    for (const name of names)
      expect((await store.load(name))?.tokens?.access_token, name).toBe(`secret-${name}`);
    expect(readdirSync(dir)).toEqual(['mcp-tokens.json']);
  });

  it('a lock left by a process that died is taken over', async () => {
    const dir = folder();
    const path = join(dir, 'mcp-tokens.json');
    // A pid that is not running: the highest possible, far past any real one.
    writeFileSync(`${path}.lock`, '4194304\n', { mode: 0o600 });
    await fileTokenStore(path).save('github', auth('secret-a'));
    expect((await fileTokenStore(path).load('github'))?.tokens?.access_token).toBe('secret-a');
    expect(readdirSync(dir)).toEqual(['mcp-tokens.json']);
  });
});
