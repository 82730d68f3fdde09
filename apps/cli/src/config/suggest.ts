// "Did you mean …?" for a mistyped option or command, as git, npm and Claude Code (commander) say it.

/** Edits (insert, delete, replace, swap two neighbours) that turn one word into the other. */
export function editDistance(from: string, to: string): number {
  const rows = from.length + 1;
  const columns = to.length + 1;
  const table: number[][] = Array.from({ length: rows }, (_, row) =>
    Array.from({ length: columns }, (_, column) => (row === 0 ? column : column === 0 ? row : 0)),
  );
  const at = (row: number, column: number) => table[row]?.[column] ?? Number.POSITIVE_INFINITY;
  for (let row = 1; row < rows; row++) {
    for (let column = 1; column < columns; column++) {
      const same = from[row - 1] === to[column - 1] ? 0 : 1;
      let best = Math.min(
        at(row - 1, column) + 1,
        at(row, column - 1) + 1,
        at(row - 1, column - 1) + same,
      );
      const swapped =
        row > 1 &&
        column > 1 &&
        from[row - 1] === to[column - 2] &&
        from[row - 2] === to[column - 1];
      if (swapped) best = Math.min(best, at(row - 2, column - 2) + 1);
      const line = table[row];
      if (line !== undefined) line[column] = best;
    }
  }
  return at(rows - 1, columns - 1);
}

/**
 * The known word closest to `word` — within 2 edits (1 for words of up to 5 letters, so short
 * words are not matched to anything), or one that starts with it — else `undefined`. Case is ignored.
 */
export function closestWord(word: string, known: readonly string[]): string | undefined {
  const typed = word.toLowerCase();
  if (typed === '') return undefined;
  const limit = typed.length <= 5 ? 1 : 2;
  let best: { word: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(typed, candidate.toLowerCase());
    if (distance <= limit && (best === undefined || distance < best.distance))
      best = { word: candidate, distance };
  }
  if (best !== undefined) return best.word;
  const prefixed = known.filter((candidate) => typed.length >= 3 && candidate.startsWith(typed));
  return prefixed.length === 1 ? prefixed[0] : undefined;
}

/**
 * Other agents' options a user brings along (Claude Code, Codex CLI, Gemini CLI), with what
 * does that here; said in the unknown-option message instead of a guess by spelling.
 */
const peerOptions: Record<string, string> = {
  '--dangerously-skip-permissions': '--mode full-access (Claude Code’s flag)',
  '--permission-mode': '--mode (default, read-only, workspace-write, full-access, plan)',
  '--allowedTools': '--allow <rule> (repeatable)',
  '--allowed-tools': '--allow <rule> (repeatable)',
  '--disallowedTools': '--deny <rule> (repeatable)',
  '--disallowed-tools': '--deny <rule> (repeatable)',
  '--system-prompt': '--system <text>',
  '--append-system-prompt': '--system <text> (or AGENTS.md in the project)',
  '--full-auto': '--mode workspace-write (Codex’s flag)',
  '--yolo': '--mode full-access --sandbox off',
  '--dangerously-bypass-approvals-and-sandbox': '--mode full-access --sandbox off',
  '--ask-for-approval': '--mode (default asks; read-only, workspace-write, full-access ask less)',
  '--approval-mode': '--mode',
  '--sandbox-mode': '--sandbox auto|required|off',
  '-m': '--model <id>',
  '-C': '--cwd <dir>',
  '--cd': '--cwd <dir>',
  '--json': '--output-format json (with -p)',
  '--print-json': '--output-format json (with -p)',
  '--verbose': '--output-format stream-json (with -p: every event as a JSON line)',
  '--api-key':
    'no flag: keys come from the environment (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY), so they stay out of shell history and ps',
  '--key':
    'no flag: keys come from the environment (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY)',
  '--settings':
    'no flag: settings are read from $AGENT_HOME/settings.json (~/.agent) and the project’s .agent/settings.json; AGENT_HOME=<dir> moves the first',
  '--config':
    'no flag: settings are read from $AGENT_HOME/settings.json (~/.agent) and the project’s .agent/settings.json; AGENT_HOME=<dir> moves the first',
  '--no-color': 'no flag: NO_COLOR=1 turns colour off (it follows the terminal otherwise)',
};

/** What another agent's option is called here (`--dangerously-skip-permissions` → `--mode full-access`). */
export function peerOption(option: string): string | undefined {
  return Object.hasOwn(peerOptions, option) ? peerOptions[option] : undefined;
}

/** Other agents' permission modes, by the mode here that does the same. */
const peerModes: Record<string, string> = {
  acceptEdits: 'workspace-write',
  bypassPermissions: 'full-access',
  dontAsk: 'full-access',
  'auto-edit': 'workspace-write',
  'full-auto': 'workspace-write',
  yolo: 'full-access',
  suggest: 'default',
  'on-request': 'default',
  never: 'full-access',
};

/** The mode here for another agent's mode name (Claude Code's `acceptEdits` → `workspace-write`). */
export function peerMode(mode: string): string | undefined {
  return Object.hasOwn(peerModes, mode) ? peerModes[mode] : undefined;
}

/** Other agents' slash commands that have no twin here, with what does it. */
const peerSlashCommands: Record<string, string> = {
  '/resume':
    'a session is resumed from the shell: agent --resume (a list) or agent --continue (the newest)',
  '/continue': 'a session is resumed from the shell: agent --continue',
  '/login':
    'keys come from the environment: export ANTHROPIC_API_KEY=… (or OPENAI_API_KEY, GEMINI_API_KEY) and start agent again',
  '/logout': 'keys come from the environment: unset the variable and start agent again',
  '/init': 'write AGENTS.md in the project: it is added to the system prompt at start',
  '/config':
    'settings live in $AGENT_HOME/settings.json (~/.agent) and .agent/settings.json; the model can read them with its config tool',
  '/status': '/cost shows the usage, /permissions the rules, /mcp the servers',
  '/approvals': '/mode and /permissions',
  // Codex, Aider and Gemini CLI go back with these; Claude Code and this CLI with /rewind.
  '/undo':
    '/rewind lists your earlier prompts; /rewind <n> puts the files and the conversation back to just before one',
  '/restore': '/rewind lists your earlier prompts; /rewind <n> goes back to just before one',
  '/new': '/clear starts a new conversation (the one before stays saved: agent --resume)',
  '/reset': '/clear starts a new conversation (the one before stays saved: agent --resume)',
  '/memory':
    'write AGENTS.md in the project (or $AGENT_HOME/AGENTS.md for every project): read at start',
  '/export': '/save <file> writes the conversation as JSON',
  '/context': '/cost shows the tokens used; /compact [focus] summarises the conversation',
  '/expand': '/output [n] prints the whole result of the last tool call (or the n-th from last)',
};

/** What does another agent's slash command here, or `undefined`. */
export function peerSlashCommand(command: string): string | undefined {
  return Object.hasOwn(peerSlashCommands, command) ? peerSlashCommands[command] : undefined;
}
