import * as os from 'node:os';

/**
 * The seccomp filter bubblewrap loads (`--seccomp FD`) before it starts a sandboxed command: a
 * classic-BPF program, assembled here so no native build step is needed. It closes what the
 * mount and namespace setup cannot:
 *
 * - `socket(AF_UNIX, …)`: a pathname socket anywhere the command can read (a daemon under
 *   `/var/lib`, `/opt`, a home directory) could be connected to; connect() carries the path in
 *   memory BPF cannot read, so the family is decided at socket() instead. `socketpair(AF_UNIX)`
 *   stays for stream and seqpacket pairs (pipes between a program's own processes); a datagram pair
 *   could be re-connected to, or `sendto()`, any path.
 * - other families: only IPv4, IPv6 and netlink's route and sock-diag protocols (getifaddrs, `ip`,
 *   `ss`) are created. The rest are not needed by ordinary tools, and some are not confined by a
 *   network namespace at all (`AF_VSOCK` reaches a VM's host).
 * - io_uring: its `IORING_OP_SOCKET`/`CONNECT` create and connect sockets without the syscalls
 *   above, so the whole interface reports ENOSYS (programs fall back to ordinary syscalls).
 * - new user namespaces (`unshare`/`clone` with `CLONE_NEWUSER`; `clone3`, whose flags sit in
 *   memory, reports ENOSYS so C libraries fall back to clone): a new one would give back every
 *   capability inside it. bubblewrap's `--disable-userns` blocks them as well, where it exists.
 * - mount-family calls and the kernel keyring (`keyctl`, `add_key`, `request_key`: not namespaced,
 *   it may hold the user's secrets): denied outright.
 * - setuid and setgid bits (chmod, fchmod, fchmodat, mknod and creating opens): a file root makes
 *   setuid in the workspace would raise whoever runs it later, outside. `openat2`, whose mode
 *   sits in memory, reports ENOSYS (C libraries use openat).
 * - any other architecture's calls (32-bit `int 0x80` on x86_64 and its `socketcall`, x32, arm32
 *   compat): the numbers above would not apply to them, so the process is killed.
 */

/** The architectures the filter is built for (the kernel's own name, as `uname -m` prints it). */
export type SeccompArchitecture = 'x86_64' | 'aarch64';

/** What the filter lets through. */
export interface SeccompFilterOptions {
  /** The kernel architecture the system call numbers are for. */
  architecture: SeccompArchitecture;
  /** Whether `socket(AF_UNIX, …)` (and datagram socket pairs) may be created [false]. */
  allowUnixSockets?: boolean;
}

/** The architecture of this kernel, if the filter can be built for it; else undefined. */
export function seccompArchitecture(machine = os.machine()): SeccompArchitecture | undefined {
  // The instructions load 32-bit words of the argument array in native order: little-endian only.
  if (os.endianness() !== 'LE') return undefined;
  if (machine === 'x86_64' || machine === 'aarch64') return machine;
  return undefined;
}

interface Architecture {
  /** AUDIT_ARCH_* value the kernel puts in seccomp_data.arch. */
  auditArch: number;
  /** Syscall numbers with this bit set belong to another ABI (x32) that shares the audit arch. */
  foreignBit?: number;
  syscalls: Record<SyscallName, number>;
  /** Calls that set a file's mode: where the mode is, and for opens where the flags are. */
  modeCalls: readonly ModeCall[];
}

/** A call that sets a file's mode (argument indexes); for an open, only with O_CREAT/O_TMPFILE. */
interface ModeCall {
  number: number;
  mode: number;
  flags?: number;
}

type SyscallName =
  | 'socket'
  | 'socketpair'
  | 'clone'
  | 'clone3'
  | 'unshare'
  | 'io_uring_setup'
  | 'io_uring_enter'
  | 'io_uring_register'
  | 'keyctl'
  | 'add_key'
  | 'request_key'
  | 'mount'
  | 'umount2'
  | 'pivot_root'
  | 'open_tree'
  | 'open_tree_attr'
  | 'move_mount'
  | 'fsopen'
  | 'fsconfig'
  | 'fsmount'
  | 'fspick'
  | 'mount_setattr'
  | 'openat2'
  | 'fallocate';

// Numbers from the kernel's arch/x86/entry/syscalls/syscall_64.tbl and the generic table
// (include/uapi/asm-generic/unistd.h) that arm64 uses; the newer calls share one number everywhere.
const newerCalls = {
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
  open_tree: 428,
  move_mount: 429,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
  clone3: 435,
  openat2: 437,
  mount_setattr: 442,
  open_tree_attr: 467,
} as const;

const architectures: Record<SeccompArchitecture, Architecture> = {
  x86_64: {
    auditArch: 0xc000003e,
    foreignBit: 0x40000000,
    syscalls: {
      socket: 41,
      socketpair: 53,
      clone: 56,
      unshare: 272,
      keyctl: 250,
      add_key: 248,
      request_key: 249,
      mount: 165,
      umount2: 166,
      pivot_root: 155,
      fallocate: 285,
      ...newerCalls,
    },
    modeCalls: [
      { number: 2, flags: 1, mode: 2 }, // open
      { number: 85, mode: 1 }, // creat
      { number: 257, flags: 2, mode: 3 }, // openat
      { number: 90, mode: 1 }, // chmod
      { number: 91, mode: 1 }, // fchmod
      { number: 268, mode: 2 }, // fchmodat
      { number: 452, mode: 2 }, // fchmodat2
      { number: 133, mode: 1 }, // mknod
      { number: 259, mode: 2 }, // mknodat
    ],
  },
  aarch64: {
    auditArch: 0xc00000b7,
    syscalls: {
      socket: 198,
      socketpair: 199,
      clone: 220,
      unshare: 97,
      keyctl: 219,
      add_key: 217,
      request_key: 218,
      mount: 40,
      umount2: 39,
      pivot_root: 41,
      fallocate: 47,
      ...newerCalls,
    },
    modeCalls: [
      { number: 56, flags: 2, mode: 3 }, // openat
      { number: 52, mode: 1 }, // fchmod
      { number: 53, mode: 2 }, // fchmodat
      { number: 452, mode: 2 }, // fchmodat2
      { number: 33, mode: 2 }, // mknodat
    ],
  },
};

const unavailableCalls: readonly SyscallName[] = [
  'io_uring_setup',
  'io_uring_enter',
  'io_uring_register',
  'clone3',
  // Its mode sits in memory: the setuid rule below could not see it. C libraries use openat.
  'openat2',
];
const deniedCalls: readonly SyscallName[] = [
  'keyctl',
  'add_key',
  'request_key',
  'mount',
  'umount2',
  'pivot_root',
  'open_tree',
  'open_tree_attr',
  'move_mount',
  'fsopen',
  'fsconfig',
  'fsmount',
  'fspick',
  'mount_setattr',
];

const AF_UNIX = 1;
const AF_INET = 2;
const AF_INET6 = 10;
const AF_NETLINK = 16;
const NETLINK_ROUTE = 0;
const NETLINK_SOCK_DIAG = 4;
const SOCK_STREAM = 1;
const SOCK_SEQPACKET = 5;
/** The socket type without SOCK_NONBLOCK / SOCK_CLOEXEC. */
const SOCK_TYPE_MASK = 0xf;
const CLONE_NEWUSER = 0x10000000;
const O_CREAT = 0x40;
const O_TMPFILE = 0x400000;
const S_ISUID_ISGID = 0o6000;
const FALLOC_FL_KEEP_SIZE = 0x01;
const FALLOC_FL_PUNCH_HOLE = 0x02;

const EPERM = 1;
const ENOSYS = 38;
const EOPNOTSUPP = 95;

const SECCOMP_RET_KILL_PROCESS = 0x80000000;
const SECCOMP_RET_ERRNO = 0x00050000;
const SECCOMP_RET_ALLOW = 0x7fff0000;

// Offsets in struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6].
const offsetNr = 0;
const offsetArch = 4;
/**
 * The low 32 bits of an argument (little-endian). Only those are compared: the kernel reads
 * domain, type, protocol and the legacy clone/unshare flags as 32-bit values, so whatever a caller
 * puts in the high half must not change the verdict.
 */
const argumentLow = (index: number) => 16 + 8 * index;

// Classic BPF opcodes (linux/bpf_common.h).
const BPF_LD_W_ABS = 0x20;
const BPF_ALU_AND_K = 0x54;
const BPF_JMP_JEQ_K = 0x15;
const BPF_JMP_JGE_K = 0x35;
const BPF_JMP_JSET_K = 0x45;
const BPF_RET_K = 0x06;

type Target = string;
type Instruction =
  | { kind: 'load'; offset: number }
  | { kind: 'and'; value: number }
  | { kind: 'jump'; opcode: number; value: number; whenTrue: Target; whenFalse: Target }
  | { kind: 'return'; value: number }
  | { kind: 'label'; name: string };

const next = '';

/** A small assembler: instructions with named jump targets, resolved to relative offsets. */
class Program {
  readonly instructions: Instruction[] = [];

  load(offset: number): this {
    this.instructions.push({ kind: 'load', offset });
    return this;
  }
  and(value: number): this {
    this.instructions.push({ kind: 'and', value });
    return this;
  }
  /** Jumps to `whenTrue` if the accumulator equals `value`, else to `whenFalse` (default: the next instruction). */
  ifEqual(value: number, whenTrue: Target, whenFalse: Target = next): this {
    this.instructions.push({ kind: 'jump', opcode: BPF_JMP_JEQ_K, value, whenTrue, whenFalse });
    return this;
  }
  ifAtLeast(value: number, whenTrue: Target, whenFalse: Target = next): this {
    this.instructions.push({ kind: 'jump', opcode: BPF_JMP_JGE_K, value, whenTrue, whenFalse });
    return this;
  }
  ifAnyBit(value: number, whenTrue: Target, whenFalse: Target = next): this {
    this.instructions.push({ kind: 'jump', opcode: BPF_JMP_JSET_K, value, whenTrue, whenFalse });
    return this;
  }
  return(value: number): this {
    this.instructions.push({ kind: 'return', value });
    return this;
  }
  label(name: string): this {
    this.instructions.push({ kind: 'label', name });
    return this;
  }

  /** The program as `struct sock_filter[]` bytes (8 per instruction, native little-endian). */
  assemble(): Buffer {
    const positions = new Map<string, number>();
    const real: Exclude<Instruction, { kind: 'label' }>[] = [];
    for (const instruction of this.instructions) {
      if (instruction.kind === 'label') positions.set(instruction.name, real.length);
      else real.push(instruction);
    }
    const bytes = Buffer.alloc(real.length * 8);
    real.forEach((instruction, index) => {
      const offset = (target: Target): number => {
        if (target === next) return 0;
        const position = positions.get(target);
        if (position === undefined) throw new Error(`seccomp filter: no label ${target}`);
        const distance = position - index - 1;
        // Conditional jumps are forward only and at most 255 instructions long.
        if (distance < 0 || distance > 255)
          throw new Error(`seccomp filter: jump to ${target} out of range`);
        return distance;
      };
      let code: number;
      let jumpTrue = 0;
      let jumpFalse = 0;
      let value: number;
      switch (instruction.kind) {
        case 'load':
          code = BPF_LD_W_ABS;
          value = instruction.offset;
          break;
        case 'and':
          code = BPF_ALU_AND_K;
          value = instruction.value;
          break;
        case 'jump':
          code = instruction.opcode;
          value = instruction.value;
          jumpTrue = offset(instruction.whenTrue);
          jumpFalse = offset(instruction.whenFalse);
          break;
        case 'return':
          code = BPF_RET_K;
          value = instruction.value;
          break;
        default: {
          const _exhaustive: never = instruction;
          throw new Error(`seccomp filter: unknown instruction ${String(_exhaustive)}`);
        }
      }
      bytes.writeUInt16LE(code, index * 8);
      bytes.writeUInt8(jumpTrue, index * 8 + 2);
      bytes.writeUInt8(jumpFalse, index * 8 + 3);
      bytes.writeUInt32LE(value >>> 0, index * 8 + 4);
    });
    return bytes;
  }
}

function modeLabel(mode: number, flags: number | undefined): string {
  return flags === undefined ? `mode-${mode}` : `create-${flags}-mode-${mode}`;
}

/** Builds the filter as the bytes `bwrap --seccomp FD` reads (a `struct sock_filter` array). */
export function buildSeccompFilter(options: SeccompFilterOptions): Buffer {
  const architecture = architectures[options.architecture];
  if (architecture === undefined) {
    throw new Error(`seccomp filter: unsupported architecture ${String(options.architecture)}`);
  }
  const unixAllowed = options.allowUnixSockets === true;
  const call = architecture.syscalls;
  const program = new Program()
    .load(offsetArch)
    .ifEqual(architecture.auditArch, next, 'kill')
    .load(offsetNr);
  if (architecture.foreignBit !== undefined) program.ifAtLeast(architecture.foreignBit, 'kill');
  program
    .ifEqual(call.socket, 'socket')
    .ifEqual(call.socketpair, 'socketpair')
    .ifEqual(call.unshare, 'namespace-flags')
    .ifEqual(call.clone, 'namespace-flags')
    .ifEqual(call.fallocate, 'fallocate');
  for (const { number, mode, flags } of architecture.modeCalls) {
    program.ifEqual(number, modeLabel(mode, flags));
  }
  for (const name of unavailableCalls) program.ifEqual(call[name], 'unavailable');
  for (const name of deniedCalls) program.ifEqual(call[name], 'deny');
  program.return(SECCOMP_RET_ALLOW);

  program
    .label('socket')
    .load(argumentLow(0))
    .ifEqual(AF_INET, 'allow')
    .ifEqual(AF_INET6, 'allow')
    .ifEqual(AF_UNIX, unixAllowed ? 'allow' : 'deny')
    .ifEqual(AF_NETLINK, next, 'deny')
    .load(argumentLow(2))
    .ifEqual(NETLINK_ROUTE, 'allow')
    .ifEqual(NETLINK_SOCK_DIAG, 'allow', 'deny');

  // Pairs of connected stream or seqpacket sockets only: those cannot be re-connected elsewhere.
  // A datagram pair can (and AF_UNIX turns SOCK_RAW into SOCK_DGRAM).
  program.label('socketpair').load(argumentLow(0)).ifEqual(AF_UNIX, next, 'deny');
  if (unixAllowed) program.return(SECCOMP_RET_ALLOW);
  else {
    program
      .load(argumentLow(1))
      .and(SOCK_TYPE_MASK)
      .ifEqual(SOCK_STREAM, 'allow')
      .ifEqual(SOCK_SEQPACKET, 'allow', 'deny');
  }

  // No setuid or setgid bits: a file made setuid by root inside would be a setuid-root program
  // outside, for whoever runs it next. An open's mode only counts when it creates the file.
  const modeBlocks = new Map<string, ModeCall>();
  for (const modeCall of architecture.modeCalls) {
    modeBlocks.set(modeLabel(modeCall.mode, modeCall.flags), modeCall);
  }
  for (const [label, { mode, flags }] of modeBlocks) {
    program.label(label);
    if (flags !== undefined) {
      program.load(argumentLow(flags)).ifAnyBit(O_CREAT | O_TMPFILE, next, 'allow');
    }
    program.load(argumentLow(mode)).ifAnyBit(S_ISUID_ISGID, 'deny', 'allow');
  }

  program.label('namespace-flags').load(argumentLow(0)).ifAnyBit(CLONE_NEWUSER, 'deny', 'allow');

  // fallocate with FALLOC_FL_KEEP_SIZE allocates blocks past the end of a file without growing it,
  // so RLIMIT_FSIZE (maxFileBytes) never sees them: `fallocate -n -l 70G f` filled the disk with a
  // file of size 0. Punching a hole (which frees blocks, and needs KEEP_SIZE) stays; the rest of
  // KEEP_SIZE's modes get EOPNOTSUPP, what a file system without them answers (callers fall back).
  program
    .label('fallocate')
    .load(argumentLow(1))
    .ifEqual(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 'allow')
    .ifAnyBit(FALLOC_FL_KEEP_SIZE, 'not-supported', 'allow');

  program
    .label('allow')
    .return(SECCOMP_RET_ALLOW)
    .label('deny')
    .return(SECCOMP_RET_ERRNO | EPERM)
    .label('unavailable')
    .return(SECCOMP_RET_ERRNO | ENOSYS)
    .label('not-supported')
    .return(SECCOMP_RET_ERRNO | EOPNOTSUPP)
    .label('kill')
    .return(SECCOMP_RET_KILL_PROCESS);
  return program.assemble();
}
