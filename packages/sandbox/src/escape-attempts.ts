/**
 * Escape attempts the sandbox suite runs inside the sandbox, as root and as an ordinary user
 * (test code, not part of the package's entry). Each is a bash script; an attack must print
 * neither `ESCAPED` nor any `SECRET-` marker (the fixture's secrets, the host socket's greeting),
 * and the suite checks the host afterwards. A `WORKS` attempt is something ordinary programs need
 * that the sandbox must keep allowing.
 *
 * Variables: HOME (a fake home full of secrets), WS (the workspace), ANCESTOR (a directory above
 * it, holding `.env` files), BASE (the fixture), OUT (a directory outside the workspace),
 * SOCK (a Unix socket listening outside /tmp and /run), ABSTRACT (an abstract socket's name),
 * HOSTPID (a process outside the sandbox), NODE, INT80_SOCKET / INT80_SOCKETCALL (x86-64
 * programs that call 32-bit socket() / socketcall() through int 0x80), NR_* (syscall numbers).
 */

/** One attempt: a name for the report and the bash script. */
export interface Attempt {
  name: string;
  script: string;
  /** `attack` (the default): must not escape. `works`: must print WORKS. */
  kind?: 'attack' | 'works';
  /** For an attack: what its output must show — that it ran and was refused (not, say, a typo). */
  evidence?: RegExp;
  /**
   * Run only when the sandbox bounds this (`status.limits`), else reported as skipped: a fork
   * bomb or a memory hog must never run unbounded on the machine running the tests.
   */
  requires?: 'maxProcesses' | 'maxMemoryBytes';
}

/**
 * perl making one raw system call: prints `ESCAPED <label>` if it succeeded, else
 * `refused: <errno text>` (the evidence that the call ran and the kernel said no). String
 * arguments are copied into variables first: perl's syscall() refuses read-only literals. The
 * word is split in the source, which bash echoes when the process is killed.
 */
function perlSyscall(call: string, label = ''): string {
  const strings: string[] = [];
  const lifted = call.replace(/"(?:[^"\\]|\\.)*"(?:\s*x\s*\d+)?/g, (literal) => {
    strings.push(literal);
    return `$s[${strings.length - 1}]`;
  });
  const variables = strings.length === 0 ? '' : `my @s = (${strings.join(', ')}); `;
  return `perl -e '${variables}my $r = ${lifted}; print $r >= 0 ? "ESC" . "APED ${label}\\n" : "refused: $!\\n"'`;
}

/** What the kernel answers a call the filter refuses: EPERM, or ENOSYS for what does not exist here. */
export const refused = /refused: (Operation not permitted|Function not implemented)/;

/** Class 1: a command running as root (or not) inside must not regain any privilege. */
export const capabilityAttempts: Attempt[] = [
  {
    name: 'no capability in any set, and no_new_privs',
    script: `grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status | grep -v '0000000000000000$' && echo ESCAPED; grep -Eq '^NoNewPrivs:\\s+1' /proc/self/status || echo ESCAPED`,
  },
  {
    name: 'umount the tmpfs over ~/.ssh',
    evidence: /must be superuser/,
    script: 'umount "$HOME/.ssh" && echo ESCAPED; cat "$HOME/.ssh/id_ed25519"',
  },
  {
    name: 'lazy umount of ~/.ssh',
    evidence: /must be superuser/,
    script: 'umount -l "$HOME/.ssh" && echo ESCAPED; cat "$HOME/.ssh/id_ed25519"',
  },
  {
    name: 'umount the /dev/null over ~/.netrc',
    evidence: /must be superuser/,
    script: 'umount "$HOME/.netrc" && echo ESCAPED; cat "$HOME/.netrc"',
  },
  {
    name: 'umount the mask of an ancestor .env',
    evidence: /must be superuser/,
    script: 'umount -l "$ANCESTOR/.env" && echo ESCAPED; cat "$ANCESTOR/.env"',
  },
  {
    name: 'mount --bind an outside directory into the workspace and write through it',
    evidence: /permission denied|must be superuser/,
    script:
      'mkdir -p "$WS/mnt"; mount --bind "$OUT" "$WS/mnt" && echo ESCAPED; echo pwned > "$WS/mnt/victim.txt"; mount -o remount,rw "$WS/mnt" && echo ESCAPED',
  },
  {
    name: 'remount read-write',
    evidence: /permission denied|must be superuser/,
    script:
      'mount -o remount,rw "$OUT" && echo ESCAPED; mount -o remount,bind,rw / && echo ESCAPED; mount -o remount,rw / && echo ESCAPED; echo pwned > "$OUT/victim.txt"',
  },
  {
    name: 'mount a tmpfs, a proc, a bind of /',
    script:
      'mkdir -p "$WS/t" "$WS/p" "$WS/r"; mount -t tmpfs none "$WS/t" && echo ESCAPED; mount -t proc proc "$WS/p" && echo ESCAPED; mount --rbind / "$WS/r" && echo ESCAPED',
  },
  {
    name: 'mount the raw syscalls (mount, umount2, fsopen, open_tree)',
    evidence: refused,
    script: [
      perlSyscall('syscall($ENV{NR_MOUNT}, "none", "/tmp", "tmpfs", 0, 0)'),
      perlSyscall('syscall($ENV{NR_UMOUNT2}, "$ENV{HOME}/.ssh", 2)'),
      perlSyscall('syscall($ENV{NR_FSOPEN}, "tmpfs", 0)'),
      perlSyscall('syscall($ENV{NR_OPEN_TREE}, -100, "/", 1)'),
      'cat "$HOME/.ssh/id_ed25519"',
    ].join('; '),
  },
  {
    name: 'the rest of the mount API (move_mount, fsmount, fspick, mount_setattr), mount --move, make-shared',
    evidence: refused,
    script: [
      perlSyscall('syscall($ENV{NR_MOVE_MOUNT}, -100, "/", -100, "/tmp", 0)'),
      perlSyscall('syscall($ENV{NR_FSMOUNT}, 0, 0, 0)'),
      perlSyscall('syscall($ENV{NR_FSPICK}, -100, "/", 0)'),
      perlSyscall('syscall($ENV{NR_MOUNT_SETATTR}, -100, "/", 0, 0, 0)'),
      'mount --move "$HOME/.ssh" "$WS" && echo ESCAPED',
      'mount --make-rshared / && echo ESCAPED',
      'cat "$HOME/.ssh/id_ed25519"',
    ].join('; '),
  },
  {
    name: 'a nested bubblewrap, and clone3 with CLONE_NEWUSER (flags in a struct a filter cannot read)',
    evidence: /clone3: (Function not implemented|Operation not permitted)/,
    script: [
      'mkdir -p "$WS/nested"',
      `bwrap --bind / / --bind "$OUT" "$WS/nested" -- sh -c 'echo ESCAPED > "$WS/nested/victim.txt"' && echo ESCAPED`,
      // clone_args: flags = CLONE_NEWUSER | CLONE_NEWNS, exit_signal = SIGCHLD; the child says so.
      `perl -e 'my $a = pack("Q11", 0x10020000, 0, 0, 0, 17, 0, 0, 0, 0, 0, 0); my $r = syscall($ENV{NR_CLONE3}, $a, 88); if ($r == 0) { print "ESC" . "APED in a new user namespace\n"; exit 0 } print "clone3: $!\n"; wait'`,
    ].join('; '),
  },
  {
    name: 'setns into the mount namespace of pid 1 (bwrap, outside the command’s own)',
    evidence: /refused: |open: /,
    script: `perl -e 'open(my $ns, "<", "/proc/1/ns/mnt") or die "open: $!\n"; my $r = syscall($ENV{NR_SETNS}, fileno($ns), 0); print $r == 0 ? "ESC" . "APED\n" : "refused: $!\n"'; true`,
  },
  {
    name: 'unshare a mount namespace, then umount',
    evidence: /unshare failed/,
    script: `unshare -m sh -c 'umount "$HOME/.ssh" && echo ESCAPED; cat "$HOME/.ssh/id_ed25519"'`,
  },
  {
    name: 'unshare a user namespace (root again), then umount, bind, remount',
    script: `unshare -r true && echo ESCAPED; unshare -Urm sh -c 'umount "$HOME/.ssh" && echo ESCAPED; mkdir -p "$WS/m2"; mount --bind "$OUT" "$WS/m2" && echo ESCAPED; mount -o remount,rw "$WS/m2" && echo ESCAPED; cat "$HOME/.ssh/id_ed25519"'`,
  },
  {
    name: 'unshare(CLONE_NEWUSER) as a raw syscall, with junk in the high bits',
    evidence: refused,
    script: [
      perlSyscall('syscall($ENV{NR_UNSHARE}, 0x10000000)'),
      perlSyscall('syscall($ENV{NR_UNSHARE}, 0x10000000 | (1 << 40))'),
      perlSyscall('syscall($ENV{NR_UNSHARE}, 0x10020000)'),
    ].join('; '),
  },
  {
    name: 'nsenter the namespaces of pid 1',
    script: `nsenter -t 1 -U -m sh -c 'umount "$HOME/.ssh" && echo ESCAPED' ; nsenter -t 1 -a true && echo ESCAPED; nsenter --user=/proc/1/ns/user true && echo ESCAPED; cat "$HOME/.ssh/id_ed25519"`,
  },
  {
    name: 'chroot and pivot_root',
    script:
      'chroot / true && echo ESCAPED; mkdir -p "$WS/old"; pivot_root "$WS" "$WS/old" && echo ESCAPED',
  },
  {
    name: 'read the secrets through /proc/<pid>/root',
    script:
      'cat "/proc/1/root$HOME/.ssh/id_ed25519" "/proc/self/root$HOME/.netrc" "/proc/1/root$ANCESTOR/.env"; for root in /proc/[0-9]*/root; do cat "$root$HOME/.ssh/id_ed25519"; done 2>/dev/null',
  },
  {
    name: 'mknod a block device and a character device',
    evidence: /Operation not permitted/,
    script:
      'mknod "$WS/loop" b 7 0 && echo ESCAPED; mknod "$WS/mem" c 1 1 && echo ESCAPED; mknod "$WS/null" c 1 3 && echo ESCAPED',
  },
  {
    name: 'write /proc/sys and /proc/sysrq-trigger',
    script:
      'cat /proc/sys/kernel/hostname > /proc/sys/kernel/hostname && echo ESCAPED; cat /proc/sys/user/max_user_namespaces > /proc/sys/user/max_user_namespaces && echo ESCAPED; mount -o remount,rw /proc/sys && echo ESCAPED; : > /proc/sysrq-trigger && echo ESCAPED',
  },
  {
    name: 'write global sysctls (kernel.core_pattern runs a program as root on the host)',
    evidence: /Read-only file system/,
    script: [
      '/proc/sys/kernel/core_pattern',
      '/proc/sys/kernel/modprobe',
      '/proc/sys/vm/swappiness',
      '/proc/sys/fs/protected_symlinks',
      '/proc/sys/net/ipv4/ip_forward',
    ]
      // The value written is the one read: nothing changes even where a write gets through.
      .map(
        (file) =>
          `value=$(cat ${file}) && printf '%s\\n' "$value" > ${file} && echo ESCAPED ${file}`,
      )
      .join('; '),
  },
  {
    name: 'setuid and setgid files in the workspace (a setuid-root program for later, outside)',
    evidence: /Operation not permitted/,
    script: [
      'cp /bin/true "$WS/suid"',
      'chmod u+s "$WS/suid"; chmod g+s "$WS/suid"; chmod 4755 "$WS/suid"',
      'install -m 4755 /bin/true "$WS/suid2"',
      `perl -e 'use Fcntl; sysopen(my $f, "$ENV{WS}/suid3", O_CREAT|O_WRONLY, 04755)'`,
      perlSyscall('syscall($ENV{NR_MKNODAT}, -100, "$ENV{WS}/suid4", 0100000 | 02755, 0)'),
      'find "$WS" -perm /6000 -type f | grep -q . && echo ESCAPED',
      perlSyscall('syscall($ENV{NR_OPENAT2}, -100, "/dev/null", "\\0" x 24, 24)'),
    ].join('; '),
  },
  {
    name: 'ordinary modes still work (chmod 755, an executable made in the workspace)',
    kind: 'works',
    script:
      'cp /bin/true "$WS/tool" && chmod 755 "$WS/tool" && chmod +t "$WS" && "$WS/tool" && umask 022 && install -m 750 /bin/true "$WS/tool2" && echo WORKS',
  },
  {
    name: "root's system secrets (password hashes, host keys)",
    script:
      "grep -qs '^root:' /etc/shadow /etc/gshadow && echo ESCAPED; cat /etc/ssh/ssh_host_*_key 2>/dev/null | grep -q PRIVATE && echo ESCAPED; true",
  },
  {
    name: 'kill, ptrace and read a process outside',
    evidence: /No such process/,
    script: `kill -0 "$HOSTPID" && echo ESCAPED; kill -9 "$HOSTPID" && echo ESCAPED; cat "/proc/$HOSTPID/environ"; ${perlSyscall('syscall($ENV{NR_PTRACE}, 16, $ENV{HOSTPID}, 0, 0)')}`,
  },
  {
    name: 'the kernel keyring (not namespaced)',
    evidence: refused,
    script: [
      perlSyscall('syscall($ENV{NR_KEYCTL}, 0, -3, 0)'),
      perlSyscall('syscall($ENV{NR_ADD_KEY}, "user", "x", "y", 1, -3)'),
      perlSyscall('syscall($ENV{NR_REQUEST_KEY}, "user", "x", 0, 0)'),
    ].join('; '),
  },
];

/** Class 2: no Unix-domain socket (nor another family that leaves the namespace) can be opened. */
export const socketAttempts: Attempt[] = [
  {
    name: 'socat UNIX-CONNECT',
    evidence: /socket\(1, 1, 0\): Operation not permitted/,
    script: 'socat -T2 - UNIX-CONNECT:"$SOCK" </dev/null',
  },
  {
    name: 'curl --unix-socket',
    evidence: /Couldn't connect to server/,
    script: 'curl -sS -m 3 --http0.9 --unix-socket "$SOCK" http://localhost/',
  },
  {
    name: 'node net.connect',
    evidence: /connect EPERM/,
    script: `"$NODE" -e 'require("net").connect(process.env.SOCK).on("data", (d) => process.stdout.write(d)).on("error", (e) => console.log(e.message))'`,
  },
  {
    name: 'perl IO::Socket::UNIX',
    evidence: /refused: Operation not permitted/,
    script: `perl -MIO::Socket::UNIX -e '$s = IO::Socket::UNIX->new(Peer => $ENV{SOCK}) or die "refused: $!\\n"; print <$s>'`,
  },
  {
    name: 'python socket.AF_UNIX',
    evidence: /PermissionError|no python3/,
    script: `command -v python3 >/dev/null || { echo "no python3"; exit 0; }; python3 -c 'import os, socket; s = socket.socket(socket.AF_UNIX); s.connect(os.environ["SOCK"]); print(s.recv(100))'`,
  },
  {
    name: 'socket(AF_UNIX) with junk in the high bits of the family',
    evidence: refused,
    script: [
      perlSyscall('syscall($ENV{NR_SOCKET}, 1 | (1 << 32), 1, 0)'),
      perlSyscall('syscall($ENV{NR_SOCKET}, 1 | (0xffff << 40), 2, 0)'),
    ].join('; '),
  },
  {
    name: 'socketpair(AF_UNIX) of datagram or raw sockets (re-connectable to any path)',
    evidence: refused,
    script: [2, 3, 2 | 0x80000, 2 | 0x800, 0x80000 | 3]
      .map((type) => perlSyscall(`syscall($ENV{NR_SOCKETPAIR}, 1, ${type}, 0, "\\0" x 8)`))
      .join('; '),
  },
  {
    name: 'other socket families (vsock reaches a VM host; netlink uevent, audit, generic; packet, alg, …)',
    evidence: /refused:/,
    script: [
      [40, 1, 0], // AF_VSOCK
      [40, 2, 0],
      [17, 3, 0], // AF_PACKET
      [38, 5, 0], // AF_ALG
      [16, 3, 15], // AF_NETLINK, NETLINK_KOBJECT_UEVENT
      [16, 3, 9], // NETLINK_AUDIT
      [16, 3, 16], // NETLINK_GENERIC
      [16, 3, 12], // NETLINK_NETFILTER
      [31, 1, 3], // AF_BLUETOOTH
      [30, 5, 0], // AF_TIPC
      [21, 5, 0], // AF_RDS
      [15, 3, 2], // AF_KEY
      [44, 3, 0], // AF_XDP
      [29, 3, 1], // AF_CAN
      [4, 2, 0], // AF_IPX
      [5, 2, 0], // AF_APPLETALK
    ]
      .map(([family, type, protocol]) =>
        perlSyscall(
          `syscall($ENV{NR_SOCKET}, ${family}, ${type}, ${protocol})`,
          `family ${family} protocol ${protocol}`,
        ),
      )
      .join('; '),
  },
  {
    name: 'io_uring (IORING_OP_SOCKET would bypass the filter)',
    evidence: refused,
    script: perlSyscall('syscall($ENV{NR_IO_URING_SETUP}, 4, "\\0" x 240)'),
  },
  {
    name: '32-bit socket() through int 0x80',
    evidence: /Bad system call|Segmentation fault/,
    script:
      '[ -x "$INT80_SOCKET" ] || { echo "Bad system call (not x86-64)"; exit 0; }; "$INT80_SOCKET"; [ $? = 42 ] && echo ESCAPED; true',
  },
  {
    name: '32-bit socketcall(SYS_SOCKET) through int 0x80',
    evidence: /Bad system call|Segmentation fault/,
    script:
      '[ -x "$INT80_SOCKETCALL" ] || { echo "Bad system call (not x86-64)"; exit 0; }; "$INT80_SOCKETCALL"; [ $? = 42 ] && echo ESCAPED; true',
  },
  {
    name: 'x32 socket() (the same audit arch, another syscall table)',
    evidence: /Bad system call/,
    script: `[ -n "$NR_X32_SOCKET" ] || { echo 'Bad system call (no x32 here)'; exit 0; }; ${perlSyscall('syscall($ENV{NR_X32_SOCKET}, 1, 1, 0)')}; echo "status $?"`,
  },
  {
    name: 'an abstract socket (the host network namespace when the network is on)',
    evidence: /socket\(1, 1, 0\): Operation not permitted/,
    script: 'socat -T2 - ABSTRACT-CONNECT:"$ABSTRACT" </dev/null',
  },
  {
    name: 'a socket under a hidden /run and /tmp stays hidden',
    script: 'ls -A /run /tmp; socat -T2 - UNIX-CONNECT:/run/docker.sock </dev/null',
  },
  {
    name: 'socketpair(AF_UNIX, SOCK_STREAM) still works',
    kind: 'works',
    script: `perl -MSocket -e 'socketpair(my $a, my $b, AF_UNIX, SOCK_STREAM, 0) or die "pair: $!\\n"; syswrite($a, "WORKS"); sysread($b, my $x, 5); print $x'`,
  },
  {
    name: "node's child processes (stdio over socket pairs) still work",
    kind: 'works',
    script: `"$NODE" -e 'process.stdout.write(require("child_process").execFileSync("echo", ["WORKS"]))'`,
  },
  {
    name: 'netlink route (getifaddrs, ip) still works',
    kind: 'works',
    script: 'ip -o link show lo | grep -q lo && echo WORKS',
  },
];

/** The secret files of the fixture's home, by path under HOME, each holding `SECRET-<path>`. */
export const homeSecretFiles = [
  '.ssh/id_ed25519',
  '.netrc',
  '.env',
  '.env.production',
  '.envrc',
  '.docker/config.json',
  '.kube/config',
  '.config/git/credentials',
  '.git-credentials',
  '.aws/credentials',
  '.config/gcloud/application_default_credentials.json',
  '.npmrc',
  '.yarnrc.yml',
  '.gem/credentials',
  '.m2/settings.xml',
  '.config/pip/pip.conf',
  '.config/hub',
  '.config/gh/hosts.yml',
  '.cargo/credentials.toml',
  '.pgpass',
  '.vault-token',
  '.password-store/github.gpg',
  '.mozilla/firefox/default/cookies.sqlite',
  '.config/google-chrome/Default/Cookies',
  '.bash_history',
  '.claude/.credentials.json',
  '.claude.json',
  '.gemini/oauth_creds.json',
  '.cache/huggingface/token',
  '.kaggle/kaggle.json',
  '.databrickscfg',
  '.pulumi/credentials.json',
  '.config/sops/age/keys.txt',
  '.supabase/access-token',
  '.gitcookies',
  '.local/share/atuin/key',
];

/** `.env*` files above the workspace, by path under BASE, each holding `SECRET-<path>`. */
export const ancestorSecretFiles = [
  'monorepo/.env',
  'monorepo/.env.local',
  'monorepo/.envrc',
  'monorepo/packages/.env.production',
  '.envs/prod',
];

/** Class 3: secrets in the home directory and `.env` files above the workspace stay hidden. */
export const secretAttempts: Attempt[] = [
  ...homeSecretFiles.map((file) => ({ name: `cat ~/${file}`, script: `cat "$HOME/${file}"` })),
  ...ancestorSecretFiles.map((file) => ({
    name: `cat $BASE/${file}`,
    script: `cat "$BASE/${file}"`,
  })),
  {
    name: 'tar the whole home',
    script: 'tar -C "$HOME" -cf - . 2>/dev/null | tr -c "[:print:]" " "',
  },
  { name: 'grep -r the home and the fixture', script: 'grep -rsa SECRET "$HOME" "$BASE"' },
  {
    name: 'find every .env above the workspace',
    script: `find "$BASE" "$HOME" -name '.env*' -exec cat {} + 2>/dev/null`,
  },
  {
    name: 'a symlink from the workspace to an ancestor .env',
    script: 'ln -sf "$ANCESTOR/.env" "$WS/link-to-env"; cat "$WS/link-to-env"',
  },
  {
    name: 'a hard link from the workspace to an ancestor .env',
    script: 'ln -f "$ANCESTOR/.env" "$WS/hard-env"; cat "$WS/hard-env"',
  },
  {
    name: 'the project’s own .env stays readable',
    kind: 'works',
    script: 'grep -q PROJECT-VISIBLE "$WS/.env" && echo WORKS',
  },
];

/**
 * Class 4: descriptors the process that creates the sandbox inherited from its own launcher (the
 * runner gets 3 and 40 on the outside victim file, 4 and 41 on the home directory). bubblewrap
 * passes every descriptor on: written through, reopened through /proc (the command's own, or pid
 * 1's — bwrap itself), or walked into, they lead past the mounts.
 */
export const descriptorAttempts: Attempt[] = [
  {
    name: 'write to the descriptors the sandbox was started with',
    script: 'for fd in 3 4 5 6 7 8 40 41; do { echo ESCAPED-fd$fd >&$fd; } 2>/dev/null; done; true',
  },
  {
    name: 'an inherited descriptor of a file or directory outside, in any process (/proc/*/fd)',
    script: `for f in /proc/[0-9]*/fd/*; do t=$(readlink "$f" 2>/dev/null); case "$t" in "$OUT"*|"$HOME") echo "ESCAPED $f -> $t";; esac; done; true`,
  },
  {
    name: 'read the home through an inherited directory descriptor (/proc/<pid>/fd/N/.ssh)',
    script: `for f in /proc/[0-9]*/fd/*; do cat "$f/.ssh/id_ed25519" "$f/.aws/credentials" 2>/dev/null; (cd "$f" 2>/dev/null && cat .netrc 2>/dev/null); done; true`,
  },
  {
    name: 'reopen an inherited file descriptor for writing through /proc',
    script: `for f in /proc/[0-9]*/fd/*; do case "$(readlink "$f" 2>/dev/null)" in "$OUT"/*) echo ESCAPED >> "$f";; esac; done; true`,
  },
];

/**
 * Class 5: planting what runs later outside the sandbox. The workspace is a repository; a
 * command that can write its `.git` makes the user's own git (a shell prompt runs `git status`
 * in every directory it shows) run anything. Each success prints ESCAPED.
 */
export const gitPlantingAttempts: Attempt[] = [
  {
    name: 'core.fsmonitor in .git/config (by file and by git config)',
    evidence: /Read-only file system|could not lock config file/,
    script:
      'printf "[core]\\n\\tfsmonitor = touch $OUT/pwned\\n" >> "$WS/.git/config" && echo ESCAPED; git -C "$WS" config core.fsmonitor "touch $OUT/pwned" && echo ESCAPED; true',
  },
  {
    name: 'a hook in .git/hooks',
    evidence: /Read-only file system/,
    script:
      'printf "#!/bin/sh\\ntouch $OUT/pwned\\n" > "$WS/.git/hooks/pre-commit" && echo ESCAPED; echo "touch $OUT/pwned" >> "$WS/.git/hooks/pre-commit.sample" && echo ESCAPED; true',
  },
  {
    name: 'a .git/commondir that points git at a configuration of the command’s making',
    evidence: /Read-only file system/,
    script:
      'mkdir -p "$WS/evil" && printf "[core]\\n\\tfsmonitor = touch $OUT/pwned\\n" > "$WS/evil/config" && echo ../evil > "$WS/.git/commondir" && echo ESCAPED; rm -rf "$WS/evil"; true',
  },
  {
    name: 'swap .git for one of its own (rename, remove, replace with a file)',
    evidence: /busy|Read-only file system/,
    script:
      'mv "$WS/.git" "$WS/.git-old" && echo ESCAPED; rm -rf "$WS/.git" 2>&1 | head -1; [ -d "$WS/.git" ] || echo ESCAPED; true',
  },
  {
    name: 'reading git still works (status, log)',
    kind: 'works',
    script:
      'git -C "$WS" status --short >/dev/null && git -C "$WS" log -1 2>&1 | grep -q "does not have any commits\\|commit" && echo WORKS',
  },
  {
    name: 'the workspace outside .git is still writable',
    kind: 'works',
    script: 'echo ok > "$WS/written.txt" && rm "$WS/written.txt" && echo WORKS',
  },
];

/**
 * Class 5, nested: repositories below the workspace's top level (a vendored one, one deep down, a
 * bare one, one whose git directory lives elsewhere in the workspace) are as protected as its own.
 */
export const nestedGitAttempts: Attempt[] = [
  {
    name: 'core.fsmonitor in a nested repository’s config (vendored, deep, bare, separate git dir)',
    evidence: /Read-only file system/,
    script:
      'for c in vendor/lib/.git/config a/b/c/d/deep/.git/config mirror.git/config store/separate.git/config; do printf "[core]\\n\\tfsmonitor = touch $OUT/pwned\\n" >> "$WS/$c" && echo "ESCAPED $c"; done; git -C "$WS/vendor/lib" config core.fsmonitor "touch $OUT/pwned" && echo ESCAPED; true',
  },
  {
    name: 'a hook in a nested repository',
    evidence: /Read-only file system/,
    script:
      'for h in vendor/lib/.git/hooks a/b/c/d/deep/.git/hooks mirror.git/hooks store/separate.git/hooks; do printf "#!/bin/sh\\ntouch $OUT/pwned\\n" > "$WS/$h/post-checkout" && echo "ESCAPED $h"; done; true',
  },
  {
    name: 'point a nested .git file at a directory of the command’s making, or swap a nested .git',
    evidence: /Read-only file system|busy/,
    script:
      'mkdir -p "$WS/evil" && echo "gitdir: $WS/evil" > "$WS/separate/.git" && echo ESCAPED; mv "$WS/vendor/lib/.git" "$WS/vendor/lib/.git-old" && echo ESCAPED; rm -rf "$WS/a/b/c/d/deep/.git" 2>&1 | head -1; [ -d "$WS/a/b/c/d/deep/.git" ] || echo ESCAPED; rm -rf "$WS/evil"; true',
  },
  {
    // A name cannot be refused: this succeeds, and checkPlanted() must report all three.
    name: 'plant new repositories (git init, a .git file, a bare one)',
    kind: 'works',
    script:
      'd="$WS/planted-$(date +%s%N)"; git init -q "$d/repo" && mkdir -p "$d/gitfile" && echo "gitdir: $d/repo/.git" > "$d/gitfile/.git" && git init -q --bare "$d/bare.git" && echo WORKS',
  },
  {
    name: 'git reads a nested repository, and its work tree is writable',
    kind: 'works',
    script:
      'git -C "$WS/vendor/lib" status --short >/dev/null && git -C "$WS/separate" status --short >/dev/null && echo x > "$WS/vendor/lib/file" && rm "$WS/vendor/lib/file" && echo WORKS',
  },
];

/** The home's startup files the fixture makes (valid for bash, fish and git alike). */
export const homeStartupFixture = ['.bashrc', '.profile', '.gitconfig', '.config/fish/config.fish'];

/**
 * Class 6: a workspace that is the home directory. What the user's next shell, git or login
 * runs stays read-only; the rest of the home is the command's to write.
 */
export const startupFileAttempts: Attempt[] = [
  {
    name: 'append to the shells’ startup files',
    evidence: /Read-only file system/,
    script:
      'for f in .bashrc .profile .config/fish/config.fish; do echo "touch $OUT/pwned" >> "$HOME/$f" && echo "ESCAPED $f"; done; true',
  },
  {
    name: 'git config --global (~/.gitconfig)',
    // git writes a lock file beside it, then renames it over the mount point.
    evidence: /could not write config file .*: Device or resource busy/,
    script: 'git config --global core.fsmonitor "touch $OUT/pwned" && echo ESCAPED; true',
  },
  {
    name: 'replace a startup file (remove, rename, write a new one over it)',
    evidence: /busy|Read-only file system/,
    script:
      'rm -f "$HOME/.bashrc" && echo ESCAPED; mv "$HOME/.profile" "$HOME/.profile-old" && echo ESCAPED; cp "$HOME/.profile" "$HOME/.profile-new" && mv -f "$HOME/.profile-new" "$HOME/.profile" && echo ESCAPED; rm -f "$HOME/.profile-new"; true',
  },
  {
    name: 'a program planted in ~/.local/bin, on the PATH',
    evidence: /Read-only file system/,
    script:
      'printf "#!/bin/sh\\ntouch $OUT/pwned\\n" > "$HOME/.local/bin/git" && echo ESCAPED; true',
  },
  {
    // Only in a home without one; checkPlanted() must report it.
    name: 'plant a startup file the home did not have (~/.zshrc)',
    kind: 'works',
    script: '[ -e "$HOME/.zshrc" ] || echo "touch $OUT/pwned" > "$HOME/.zshrc"; echo WORKS',
  },
  {
    name: 'the rest of the home is writable',
    kind: 'works',
    script: 'echo ok > "$HOME/notes.txt" && rm "$HOME/notes.txt" && echo WORKS',
  },
];
