/**
 * Which user a TCP connection on the loopback interface comes from, on Linux: every user of the
 * machine can connect to a port on 127.0.0.1, and the socket itself does not say whose process is
 * at the other end, but the kernel's socket tables (`/proc/net/tcp`, `/proc/net/tcp6`) do — the
 * peer's end is listed there with its owner, both ends being in this network namespace.
 */
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';

/**
 * Whose process is at the other end of `socket`: `{ uid }` of its owner; `'unknown'` where this
 * cannot be told (not Linux, no `/proc`, not a loopback connection); `'gone'` when the tables
 * are readable but list no open socket of the peer (it closed, leaving a TIME_WAIT entry, which
 * names no owner, and one reset leaves none); `'unknown'` then under WSL, where a Windows
 * process reaches 127.0.0.1 from outside this kernel.
 */
export function loopbackPeer(socket: Socket): { uid: number } | 'unknown' | 'gone' {
  if (process.platform !== 'linux') return 'unknown';
  const { remoteAddress, remotePort, localPort } = socket;
  if (remoteAddress === undefined || remotePort === undefined || localPort === undefined)
    return 'unknown';
  if (!isLoopbackAddress(remoteAddress)) return 'unknown';
  const entries = socketTable();
  if (entries === undefined) return 'unknown';
  const owners = new Set<number>();
  // Our own end, which this process holds: tables that do not list it (a kernel that fills them
  // partly, as some sandboxes do) tell nothing of the peer either.
  let oursListed = false;
  for (const { local, remote, state, uid, inode } of entries) {
    if (local === localPort && remote === remotePort && inode !== '0') oursListed = true;
    if (local !== remotePort || remote !== localPort) continue;
    // The peer's socket while a process holds it: a closed one (TIME_WAIT, or orphaned) lists
    // inode 0, and TIME_WAIT uid 0, whoever owned it.
    if (!liveStates.has(state) || inode === '0') continue;
    owners.add(uid);
  }
  // Under WSL a Windows browser may reach 127.0.0.1 from outside this kernel, listed nowhere.
  if (!oursListed) return 'unknown';
  if (owners.size === 0) return underWsl() ? 'unknown' : 'gone';
  // Two open sockets with this pair of ports (from two loopback addresses): either may be it.
  if (owners.size > 1) return { uid: -1 };
  return { uid: [...owners][0] ?? -1 };
}

/** One TCP socket of the kernel's tables: its ports, state (hex), owner and inode. */
interface SocketEntry {
  local: number;
  remote: number;
  state: string;
  uid: number;
  inode: string;
}

/** Every TCP socket (IPv4 and IPv6) of this network namespace; undefined without the tables. */
function socketTable(): SocketEntry[] | undefined {
  const tables: string[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    try {
      tables.push(readFileSync(table, 'latin1'));
    } catch {}
  }
  if (tables.length === 0) return undefined;
  const entries: SocketEntry[] = [];
  for (const line of tables.join('\n').split('\n')) {
    // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode …
    const [, local, remote, state, , , , uid, , inode] = line.trim().split(/\s+/);
    if (local === undefined || remote === undefined || state === undefined) continue;
    if (uid === undefined || inode === undefined || !/^\d+$/.test(uid)) continue;
    entries.push({ local: portOf(local), remote: portOf(remote), state, uid: Number(uid), inode });
  }
  return entries;
}

/**
 * The owner of a process listening on TCP `port` (any address: 127.0.0.1 and [::1] are two
 * sockets, a `localhost` client may reach either) that is neither this user, nor root, nor a
 * system account; undefined when there is none, or nothing can be told (not Linux). Another user
 * can listen on a loopback port the user's own server left free, or on [::1] beside it, and be
 * sent what the server is.
 *
 * A system account (a uid below the machine's `UID_MIN`, 1000 unless `/etc/login.defs` says
 * otherwise) is one root made for a service — Ollama's installer runs it as the system user
 * `ollama` — so it counts as root does; `nobody` (65534) and every login user do not.
 */
export function foreignListener(port: number): number | undefined {
  if (process.platform !== 'linux') return undefined;
  const ours = process.getuid?.();
  const listening = '0A';
  for (const entry of socketTable() ?? [])
    if (
      entry.state === listening &&
      entry.local === port &&
      entry.uid !== ours &&
      !systemAccount(entry.uid)
    )
      return entry.uid;
  return undefined;
}

/** Root or an account made for a service: below `UID_MIN` (login.defs), never `nobody`. */
function systemAccount(uid: number): boolean {
  return uid >= 0 && uid < firstLoginUid() && uid !== 65_534;
}

let loginUidFloor: number | undefined;
/** `UID_MIN` of `/etc/login.defs` (where useradd starts login users), 1000 when unset. */
function firstLoginUid(): number {
  if (loginUidFloor !== undefined) return loginUidFloor;
  loginUidFloor = 1000;
  try {
    const found = /^\s*UID_MIN\s+(\d+)\s*$/m.exec(readFileSync('/etc/login.defs', 'latin1'))?.[1];
    // A floor under 100 would make login users of odd set-ups count as services: keep 1000 then.
    if (found !== undefined && Number(found) >= 100) loginUidFloor = Number(found);
  } catch {}
  return loginUidFloor;
}

/** ESTABLISHED (01), FIN_WAIT1 (04) and FIN_WAIT2 (05): the peer's socket open, its owner named. */
const liveStates = new Set(['01', '04', '05']);

/** Whether this is Linux under Windows' WSL, whose localhost is shared with Windows. */
function underWsl(): boolean {
  try {
    return /microsoft/i.test(readFileSync('/proc/sys/kernel/osrelease', 'latin1'));
  } catch {
    return false;
  }
}

function portOf(address: string): number {
  return Number.parseInt(address.slice(address.lastIndexOf(':') + 1), 16);
}

function isLoopbackAddress(address: string): boolean {
  const ip = address.replace(/^::ffff:/i, '');
  return ip === '::1' || ip.startsWith('127.');
}

/**
 * Whether a connection on the loopback interface can be this process's user's (or root's, who
 * can do anything this user can): true where nothing can be told (not Linux).
 */
export function fromThisUser(socket: Socket): boolean {
  const peer = loopbackPeer(socket);
  if (peer === 'unknown') return true;
  if (peer === 'gone') return false;
  const ours = process.getuid?.();
  return ours === undefined || peer.uid === ours || peer.uid === 0;
}
