// The help texts: `agent --help` and each command's own (`agent demo --help`…).

/** The commands with a help text of their own (`agent demo --help`). */
export type HelpTopic = 'demo' | 'trust' | 'mcp-serve' | 'mcp-login';

/** The help text. */
export const usage = `Usage:
  agent [options]                 interactive session (needs a terminal)
  agent "prompt" [options]        interactive session that starts with this prompt
  agent -p "prompt" [options]     one run; the final answer goes to stdout
  cat log | agent -p "explain"    piped stdin is appended to the prompt
  echo "prompt" | agent -p        no prompt text: stdin is the prompt (also -p -)
  agent demo                      offline demo: a scripted model drives the real tools
                                  (--code-mode: one script makes the calls)
  agent trust [list|revoke]       trust this folder's configuration (hooks, MCP servers, env,
                                  allow rules…), pinned to what it is now; list; or revoke
  agent mcp serve [--http [--port N]]  serve the built-in tools (sandboxed, with --mode/--allow/--deny)
                                  to MCP clients over stdio, or Streamable HTTP on 127.0.0.1
                                  for whoever holds the bearer token printed at start
                                  (--token-file F: the token in F, mode 0600; --no-auth: anyone)
  agent mcp login <server>        sign in to an HTTP MCP server in the browser; the token is kept
                                  for later runs, those with no terminal (-p, CI) included

Model:
  --provider <name>        anthropic | openai | google   [the model's vendor (claude-…,
                           gpt-…/o3…, gemini-…), else the first with an API key set:
                           ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY/GOOGLE_API_KEY]
  --model <id>             model id   [claude-sonnet-4-6 | gpt-5-mini | gemini-2.5-flash]
  --base-url <url>         an OpenAI-compatible server (Ollama, vLLM, …); needs --model
  --scripted <file.json>   no network: replay the assistant turns in this file
  --system <text>          system prompt

Tools:
  --cwd <dir>              workspace of the built-in tools   [current directory]
  --mcp-config <file>      { "mcpServers": { "name": { "command", "args", "env" } | { "url" } } }
  --mcp-timeout <s>        seconds an MCP server has to start and answer   [30]
  --mcp-log-level <level>  MCP servers' log messages shown from: debug|info|notice|warning|error|
                           critical|alert|emergency|off [warning]
  --openapi <spec>[=name]  an OpenAPI document (path or URL) as tools; repeatable
  --sandbox <mode>         auto | required | off   [auto: bubblewrap where it works]
                           commands may write only the workspace and a private /tmp,
                           credentials are hidden, no network
  --code-mode              add run_script: the model may write one short script that calls the
                           tools (each call gated as a direct one), instead of many calls
  --tools <list>           which tools the session offers, in order: default (its usual tools:
                           built-ins, web, REPLs, skill, config, run_script, every MCP and
                           OpenAPI tool) | kiro (think, report_issue, use_aws, knowledge,
                           introspect, code) | a tool's name | mcp__<server>[__<tool>] |
                           openapi__<name>[__<operation>] | a glob with * | -item removes;
                           e.g. --tools default,kiro, --tools=-bash,-mcp__github, or
                           --tools read_file,glob,mcp__docs__*   [default]
  --pass-env <NAME>        give the tools' processes (bash, REPLs, language servers, hooks) this
                           variable although it holds a credential; repeatable [API keys,
                           tokens, passwords are withheld from them]

Permissions:
  --trust                  apply this folder's own configuration for this run even if the
                           folder is not trusted (hooks, MCP servers, env, allow rules…); without
                           it an untrusted folder's settings may only narrow (see agent trust)
  --mode <mode>            default | read-only | workspace-write | full-access | plan
                           [default in a session, read-only with -p]; plan: read-only
                           tools only, then a plan to approve (-p prints it)
  --allow <rule>           e.g. 'bash(git *)'; repeatable
  --ask <rule>             always ask, e.g. 'bash(git push*)'; repeatable
  --deny <rule>            e.g. 'bash(rm *)'; repeatable

Session:
  -p, --print <prompt>     run once, non-interactively
  --output-format <f>      text | json | stream-json   [text] (-p only; see the README)
  --input-format <f>       text | stream-json   [text]; stream-json: user messages as JSON lines
                           on stdin, each one run of the same session (implies -p)
  --max-turns <n>          model calls per run   [100]; given, its sub-agents' count too
                           (without it the run and its sub-agents stop at 400 together)
  --max-tool-calls <n>     tool calls per run, its sub-agents' and scripts' included   [2000]
  --save <file>            write the conversation (JSON) after every run [every session is
                           saved anyway under $AGENT_HOME/sessions/, ~/.agent by default]
  --resume [<file>|<id>]   continue a conversation saved with --save or /save, or a kept
                           session by the sessionId json output prints; without either, pick
                           one of this workspace's saved sessions from a list
  -c, --continue           continue this workspace's newest saved session
  --keep-grants            a resumed session gets back its "always" answers (saved with it;
                           "never" answers always come back)
  --hosted-web-search      let the model use its provider's own web search (Anthropic, OpenAI
                           Responses, Gemini grounding); answers carry their sources
  -h, --help               this text
  -v, --version            the version

Files and environment:
  ~/.agent/settings.json   your settings; .agent/settings.json (and .local.json) the project's,
                           applied as far as the folder is trusted (see the README)
  AGENT_HOME=<dir>         where settings, sessions and trusted folders live   [~/.agent]
  NO_COLOR=1               no colours; NODE_USE_ENV_PROXY=1 makes Node use HTTPS_PROXY
  agent <command> --help   the help of demo, trust and mcp serve

Exit codes: 0 completed, 1 error, 2 usage, 3 max-turns, 4 a call needed approval and -p could
not ask (the message names the --allow rule or --mode that permits it), 130 aborted.
`;

/** The help of one command (`agent demo --help`, `agent trust --help`, `agent mcp serve --help`). */
export const commandUsage: Record<HelpTopic, string> = {
  demo: `Usage: agent demo [--code-mode]

Runs offline, with no API key: a scripted model drives the real built-in tools (files, search,
bash in the OS sandbox) in a temporary workspace under a permission policy, and prints each call,
its result and the denials. Nothing outside the temporary workspace is changed.

  --code-mode   one model-written script makes the calls (run_script)

Then, with an API key set (ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY): agent for a
session, agent -p "prompt" for one run. agent --help lists every option.
`,
  trust: `Usage: agent trust [list|revoke] [--cwd <dir>]

A folder's own configuration (.agent/settings.json, .agent/settings.local.json, .mcp.json: hooks,
MCP servers, env, allow rules, a wider mode…) runs nothing until you trust the folder. An
interactive session asks; -p and agent mcp serve never ask (--trust applies it for one run).

  agent trust          trust the project of this folder (or --cwd), pinned to what its
                       configuration holds now: a later change asks again
  agent trust list     the trusted folders
  agent trust revoke   forget this folder's trust

Kept in $AGENT_HOME/trusted-folders.json (~/.agent by default).
`,
  'mcp-serve': `Usage: agent mcp serve [--http [--port N] [--token-file F | --no-auth]] [options]

Serves the built-in tools (and --mcp-config / --openapi tools) to an MCP client, which brings its
own model. Over stdio (the default) the client starts it; it is not meant to be typed at. E.g.
  claude mcp add agent -- agent mcp serve --mode workspace-write
  { "mcpServers": { "agent": { "command": "agent", "args": ["mcp", "serve"] } } }

  --http               Streamable HTTP on 127.0.0.1 instead, for whoever holds the bearer token
                       printed at start (stderr not a terminal: written to
                       $AGENT_HOME/mcp-serve/<port>.token, 0600, and only its path printed)
  --port N             the port of --http [any free one]
  --token-file F       the token in F (mode 0600) instead of a new one
  --no-auth            no token: anyone who can reach the port
  --max-concurrent-calls N   tool calls running at once (all clients together) [8]
  --max-queued-calls N       calls waiting for a turn; more are refused [32]
  --max-pipelined-requests N --http: unanswered requests per connection [16]
  --session-idle-minutes N   --http: a client session unused this long is forgotten (its
                       Mcp-Session-Id then gets 404; the client starts a new one) [30]
                       (or "mcpServe" in $AGENT_HOME/settings.json; the flags win)
  --cwd, --mode, --allow, --ask, --deny, --sandbox, --tools, --pass-env, --trust,
  --mcp-config, --mcp-timeout, --openapi   as for a session (agent --help); the mode is
                       read-only unless --mode or a rule widens it

The command hooks of your settings guard and see the served calls as a session's (PreToolUse,
PostToolUse), in the OS sandbox where a session's would be; their notices go to stderr.

agent mcp login <server> signs in to an HTTP MCP server (agent mcp login --help).
`,
  'mcp-login': `Usage: agent mcp login <server> [--mcp-config F] [--cwd DIR] [--trust]

Signs in to an HTTP MCP server that asks for authorisation (OAuth): the browser opens ($BROWSER,
else open/xdg-open; the URL is printed too), and the token is kept in $AGENT_HOME/mcp-tokens.json
(mode 0600) for later runs — also those nobody can sign in from (-p with piped input, CI,
agent mcp serve), which skip such a server at once instead of waiting for a browser.
The server is found as a session finds it: --mcp-config, your settings, the folder's .mcp.json
when the folder is trusted (or --trust). Says "already signed in" when its token still works.
`,
};
