import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildSeccompFilter,
  type SeccompArchitecture,
  seccompArchitecture,
} from './seccomp-filter.js';

// The filter run by a classic-BPF interpreter written here (the kernel's semantics for the
// instructions the filter uses; any other opcode fails the test), for both architectures —
// including the one this machine is not. The escape suite runs it in the real kernel.

interface SeccompData {
  nr: number;
  arch: number;
  args?: readonly bigint[];
}

function evaluate(program: Buffer, data: SeccompData): number {
  const packet = Buffer.alloc(64);
  packet.writeInt32LE(data.nr, 0);
  packet.writeUInt32LE(data.arch, 4);
  (data.args ?? []).forEach((value, index) => {
    packet.writeBigUInt64LE(BigInt.asUintN(64, value), 16 + 8 * index);
  });
  let accumulator = 0;
  for (let pc = 0; pc < program.length / 8; ) {
    const code = program.readUInt16LE(pc * 8);
    const jumpTrue = program.readUInt8(pc * 8 + 2);
    const jumpFalse = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    pc++;
    switch (code) {
      case 0x20: // ld [k]
        accumulator = packet.readUInt32LE(k);
        break;
      case 0x54: // and #k
        accumulator = (accumulator & k) >>> 0;
        break;
      case 0x15: // jeq #k
        pc += accumulator === k ? jumpTrue : jumpFalse;
        break;
      case 0x35: // jge #k
        pc += accumulator >= k ? jumpTrue : jumpFalse;
        break;
      case 0x45: // jset #k
        pc += (accumulator & k) !== 0 ? jumpTrue : jumpFalse;
        break;
      case 0x06: // ret #k
        return k;
      default:
        throw new Error(`unexpected opcode 0x${code.toString(16)} at ${pc - 1}`);
    }
  }
  throw new Error('the program ran off its end');
}

const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;
const ENOSYS = 0x00050026;
const EOPNOTSUPP = 0x0005005f;
const KILL = 0x80000000;

const machines: Record<
  SeccompArchitecture,
  { arch: number; foreign: number[]; calls: Record<string, number> }
> = {
  x86_64: {
    arch: 0xc000003e,
    foreign: [0x40000000 /* i386 */, 0xc00000b7],
    calls: {
      read: 0,
      socket: 41,
      socketpair: 53,
      connect: 42,
      clone: 56,
      unshare: 272,
      mount: 165,
      umount2: 166,
      keyctl: 250,
      io_uring_setup: 425,
      clone3: 435,
      openat: 257,
      open: 2,
      chmod: 90,
      fchmodat: 268,
      openat2: 437,
      ptrace: 101,
      fallocate: 285,
    },
  },
  aarch64: {
    arch: 0xc00000b7,
    foreign: [0x40000028 /* arm */, 0xc000003e],
    calls: {
      read: 63,
      socket: 198,
      socketpair: 199,
      connect: 203,
      clone: 220,
      unshare: 97,
      mount: 40,
      umount2: 39,
      keyctl: 219,
      io_uring_setup: 425,
      clone3: 435,
      openat: 56,
      fchmodat: 53,
      openat2: 437,
      ptrace: 117,
      fallocate: 47,
    },
  },
};

describe.each(Object.keys(machines) as SeccompArchitecture[])(
  'the seccomp filter on %s',
  (name) => {
    const machine = machines[name];
    const call = (syscall: string): number => {
      const number = machine.calls[syscall];
      if (number === undefined) throw new Error(`no ${syscall} on ${name}`);
      return number;
    };
    const blocked = buildSeccompFilter({ architecture: name });
    const allowed = buildSeccompFilter({ architecture: name, allowUnixSockets: true });
    const run = (program: Buffer, syscall: string, ...args: bigint[]) =>
      evaluate(program, { nr: call(syscall), arch: machine.arch, args });

    it('kills a process making calls of another architecture (32-bit compat, the other 64-bit one)', () => {
      for (const arch of machine.foreign) {
        expect(evaluate(blocked, { nr: 0, arch })).toBe(KILL);
        expect(evaluate(allowed, { nr: 102 /* i386 socketcall */, arch })).toBe(KILL);
      }
    });

    // Only x86_64 has a second ABI (x32) under its own audit arch.
    if (name === 'x86_64') {
      it('kills x32 calls (same audit arch, bit 30 set)', () => {
        expect(
          evaluate(blocked, { nr: 41 | 0x40000000, arch: machine.arch, args: [1n, 1n, 0n] }),
        ).toBe(KILL);
        expect(evaluate(blocked, { nr: 0x40000000, arch: machine.arch })).toBe(KILL);
      });
    }

    it('refuses socket(AF_UNIX) whatever sits in the high half of the argument, unless allowed', () => {
      for (const domain of [1n, 1n | (1n << 32n), 1n | (0xffffn << 48n)]) {
        expect(run(blocked, 'socket', domain, 1n, 0n)).toBe(EPERM);
        expect(run(allowed, 'socket', domain, 1n, 0n)).toBe(ALLOW);
      }
    });

    it('lets IPv4, IPv6 and netlink route / sock-diag through, and no other family or netlink protocol', () => {
      for (const program of [blocked, allowed]) {
        expect(run(program, 'socket', 2n, 1n, 0n)).toBe(ALLOW);
        expect(run(program, 'socket', 10n, 2n, 0n)).toBe(ALLOW);
        expect(run(program, 'socket', 16n | (7n << 40n), 3n, 0n)).toBe(ALLOW);
        expect(run(program, 'socket', 16n, 3n, 4n)).toBe(ALLOW);
        for (const protocol of [9n, 12n, 15n, 16n]) {
          expect(run(program, 'socket', 16n, 3n, protocol)).toBe(EPERM);
        }
        for (const family of [0n, 3n, 4n, 5n, 15n, 17n, 21n, 29n, 30n, 31n, 38n, 40n, 44n, 45n]) {
          expect(run(program, 'socket', family, 1n, 0n)).toBe(EPERM);
        }
      }
    });

    it('keeps stream and seqpacket socket pairs, refuses datagram and raw ones (re-connectable)', () => {
      const SOCK_CLOEXEC = 0x80000n;
      const SOCK_NONBLOCK = 0x800n;
      for (const type of [1n, 5n, 1n | SOCK_CLOEXEC, 5n | SOCK_NONBLOCK | SOCK_CLOEXEC]) {
        expect(run(blocked, 'socketpair', 1n, type, 0n)).toBe(ALLOW);
      }
      for (const type of [2n, 3n, 2n | SOCK_CLOEXEC, 3n | SOCK_NONBLOCK, 2n | (1n << 40n)]) {
        expect(run(blocked, 'socketpair', 1n, type, 0n)).toBe(EPERM);
        expect(run(allowed, 'socketpair', 1n, type, 0n)).toBe(ALLOW);
      }
      expect(run(blocked, 'socketpair', 2n, 1n, 0n)).toBe(EPERM);
    });

    it('refuses fallocate past the end of a file (KEEP_SIZE), keeps growing it and punching holes', () => {
      // Growing (0), and a hole punched (PUNCH_HOLE | KEEP_SIZE), whatever sits in the high half.
      for (const mode of [0n, 3n, 0x10n, 0x20n, 0x8n, 3n | (1n << 40n)]) {
        expect(run(blocked, 'fallocate', 3n, mode, 0n, 1n << 30n)).toBe(ALLOW);
      }
      // Blocks past the end that RLIMIT_FSIZE never sees: plain, zeroed, unshared, written zeroes.
      for (const mode of [1n, 0x11n, 0x41n, 0x81n, 7n, 1n | (1n << 40n)]) {
        expect(run(blocked, 'fallocate', 3n, mode, 0n, 1n << 30n)).toBe(EOPNOTSUPP);
        expect(run(allowed, 'fallocate', 3n, mode, 0n, 1n << 30n)).toBe(EOPNOTSUPP);
      }
    });

    it('refuses new user namespaces, keeps ordinary clones', () => {
      const CLONE_NEWUSER = 0x10000000n;
      expect(run(blocked, 'unshare', CLONE_NEWUSER)).toBe(EPERM);
      expect(run(blocked, 'unshare', CLONE_NEWUSER | 0x20000n)).toBe(EPERM);
      expect(run(blocked, 'clone', CLONE_NEWUSER | 17n)).toBe(EPERM);
      expect(run(blocked, 'clone', 0x1200011n)).toBe(ALLOW); // fork()
      expect(run(blocked, 'clone', 0x3d0f00n)).toBe(ALLOW); // pthread_create()
      expect(run(blocked, 'unshare', 0x20000n)).toBe(ALLOW); // CLONE_NEWNS: the kernel asks for a capability
      expect(run(blocked, 'clone3')).toBe(ENOSYS);
    });

    it('denies mounts and the keyring; io_uring and openat2 do not exist', () => {
      expect(run(blocked, 'mount')).toBe(EPERM);
      expect(run(blocked, 'umount2')).toBe(EPERM);
      expect(run(blocked, 'keyctl')).toBe(EPERM);
      expect(run(blocked, 'io_uring_setup')).toBe(ENOSYS);
      expect(run(blocked, 'openat2')).toBe(ENOSYS);
    });

    it('refuses setuid and setgid bits; an open without O_CREAT ignores its mode argument', () => {
      const O_CREAT = 0x40n;
      expect(run(blocked, 'openat', -100n, 0n, O_CREAT | 1n, 0o4755n)).toBe(EPERM);
      expect(run(blocked, 'openat', -100n, 0n, 0x410000n, 0o2755n)).toBe(EPERM); // O_TMPFILE
      expect(run(blocked, 'openat', -100n, 0n, O_CREAT | 1n, 0o755n)).toBe(ALLOW);
      expect(run(blocked, 'openat', -100n, 0n, 0n, 0o4755n)).toBe(ALLOW);
      expect(run(blocked, 'fchmodat', -100n, 0n, 0o6755n)).toBe(EPERM);
      expect(run(blocked, 'fchmodat', -100n, 0n, 0o1777n)).toBe(ALLOW);
      if (name === 'x86_64') {
        expect(run(blocked, 'open', 0n, O_CREAT, 0o4700n)).toBe(EPERM);
        expect(run(blocked, 'chmod', 0n, 0o2755n)).toBe(EPERM);
        expect(run(blocked, 'chmod', 0n, 0o644n)).toBe(ALLOW);
      }
    });

    it('lets every other call through, whatever its arguments', () => {
      const handled = new Set(Object.values(machine.calls));
      for (const kept of ['read', 'connect', 'ptrace']) handled.delete(call(kept));
      const special = new Set([
        ...Object.values(machine.calls).filter((number) => handled.has(number)),
        // fchmod, mknod(at), creat, fchmodat2, other mount and namespace calls:
        ...(name === 'x86_64'
          ? [85, 91, 133, 259, 452, 248, 249, 155]
          : [52, 33, 452, 217, 218, 41]),
        ...[426, 427, 428, 429, 430, 431, 432, 433, 442, 467],
      ]);
      fc.assert(
        fc.property(
          fc.integer({ min: 0, max: 600 }).filter((number) => !special.has(number)),
          fc.array(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), { minLength: 6, maxLength: 6 }),
          (nr, args) => {
            expect(evaluate(blocked, { nr, arch: machine.arch, args })).toBe(ALLOW);
          },
        ),
      );
    });
  },
);

describe('seccompArchitecture', () => {
  it('knows x86_64 and aarch64 and nothing else', () => {
    expect(seccompArchitecture('x86_64')).toBe('x86_64');
    expect(seccompArchitecture('aarch64')).toBe('aarch64');
    for (const machine of ['riscv64', 'armv7l', 'i686', 's390x', 'ppc64le']) {
      expect(seccompArchitecture(machine)).toBeUndefined();
    }
  });

  it('refuses to build for an unknown architecture', () => {
    expect(() => buildSeccompFilter({ architecture: 'riscv64' as SeccompArchitecture })).toThrow(
      'unsupported architecture riscv64',
    );
  });
});
