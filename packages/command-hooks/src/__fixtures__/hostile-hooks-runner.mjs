// Runs the user's innocent hooks against a hostile workspace through the built packages, as
// whichever user starts it (the test starts it as root and, through setpriv, as nobody).
// argv: the input JSON file. Prints the hooks' results as JSON.
import * as fs from 'node:fs';

const input = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const { CommandHooks, parseHooksConfig } = await import(input.commandHooks);
const { createSandbox, defaultSecretPaths } = await import(input.sandboxPackage);
const { workspace, home, agentHome, tools } = input;
const sandbox = input.sandboxed
  ? createSandbox({
      mode: 'required',
      writableRoots: [workspace],
      // The fixture lives under /var/tmp, visible already; the home's keys and the agent's own
      // state are hidden as the CLI hides them.
      secretPaths: [...defaultSecretPaths(home), agentHome],
      network: 'on',
      onWarning: () => undefined,
    })
  : undefined;
const node = JSON.stringify(process.execPath);
const config = parseHooksConfig({
  PostToolUse: [
    {
      matcher: 'edit_file',
      hooks: [{ type: 'command', command: `${node} ${JSON.stringify(`${tools}/fake-prettier.mjs`)} --write src.js` }],
    },
  ],
  SessionStart: [{ hooks: [{ type: 'command', command: 'git status --porcelain' }] }],
  UserPromptSubmit: [
    {
      hooks: [
        {
          type: 'command',
          command: `cat "$HOME/.ssh/id_ed25519" "$HOSTILE_AGENT_HOME/settings.json"; env`,
        },
      ],
    },
  ],
});
const warnings = [];
// One innocent SessionStart hook (`input.sessionStart`), when the test names one.
if (input.sessionStart !== undefined) {
  const hooks = new CommandHooks(
    parseHooksConfig({ SessionStart: [{ hooks: [{ type: 'command', command: input.sessionStart }] }] }),
    {
      cwd: workspace,
      sessionId: 'hostile',
      onWarning: (warning) => warnings.push(warning),
      ...(sandbox === undefined ? {} : { sandbox }),
    },
  );
  const sessionContext = await hooks.sessionStart('startup');
  process.stdout.write(JSON.stringify({ sessionContext, warnings }));
  process.exit(0);
}
const hooks = new CommandHooks(config, {
  cwd: workspace,
  sessionId: 'hostile',
  onWarning: (warning) => warnings.push(warning),
  ...(sandbox === undefined ? {} : { sandbox }),
});
const after = await hooks.agentHooks.afterToolExecution(
  { toolCallId: 'call_1', toolName: 'edit_file', args: { path: 'src.js' } },
  { content: [{ type: 'text', text: 'edited' }] },
);
const sessionContext = await hooks.sessionStart('startup');
const submitted = await hooks.userPromptSubmit('hello');
process.stdout.write(JSON.stringify({ after, sessionContext, submitted, warnings }));
