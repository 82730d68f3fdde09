import type { AnyAgentTool } from '@agent/core';
import type { Sandbox } from '@agent/sandbox';
import { nodeFileSystem, type ProtectedWrites, protectedWriteReason } from '@agent/tools-builtin';

/** The code-intelligence tools of a session, when a language server is installed. */
export interface LoadedLspTools {
  tools: AnyAgentTool[];
  /** For the banner: `lsp typescript, python (8)`. */
  source: string;
  /** Stops the language servers. */
  close: () => Promise<void>;
}

/** Options of {@link loadLspTools}. */
export interface LoadLspOptions {
  /** The session's sandbox, where the servers run (as bash does). */
  sandbox?: Sandbox;
  /** Credential variables the servers get anyway (`--pass-env`). */
  passEnv?: readonly string[];
  /**
   * Whether the folder is trusted [true]: if not, its own servers and TypeScript (node_modules, a
   * relative PATH entry) are not run even sandboxed — only servers installed outside it. A trusted
   * folder's own run only in `sandbox`, when it is active.
   */
  trusted?: boolean;
  /** Told why no server is offered when that is the folder's trust. */
  log?: (line: string) => void;
  /**
   * The places the file tools write only at the full-access tier (a `.vscode` task, a git hook in
   * the tree, a startup file of the home): a rename's edit, which the sandboxed server computes
   * and this process writes, is asked there too [all protected].
   */
  protectedWrites?: ProtectedWrites;
}

/** Built-in tools that write a file named by their `path` argument. */
const fileWriters = new Set(['write_file', 'edit_file', 'text_editor', 'notebook_edit']);

/**
 * `@agent/tools-lsp`'s tools for `cwd` when a server (TypeScript 7's, typescript-language-server,
 * pyright) is installed there (node_modules/.bin up the tree, or PATH); undefined otherwise, and
 * nothing is started until a tool is called. The built-in file writers in `tools` are wrapped so
 * that each successful write is reported to the running servers, and bash so that the source
 * files it changed are (a file a server has not opened is not re-read otherwise). The servers run in `sandbox` (the session's, as bash does): they execute the
 * workspace's own code (its node_modules/.bin, its TypeScript).
 */
export async function loadLspTools(
  cwd: string,
  tools: AnyAgentTool[],
  options: LoadLspOptions = {},
): Promise<LoadedLspTools | undefined> {
  const { sandbox, passEnv = [], trusted = true } = options;
  // The workspace's own servers (its node_modules/.bin, its TypeScript) run only in the sandbox:
  // outside it, a file tool writes them unasked (workspace-write) and the next read-only lsp call
  // ran what it wrote as the user — in -p, where bash is refused for want of an approver, too.
  const confined = sandbox?.status.active === true;
  const ownServers = trusted && confined;
  // Loaded only here: its JSON-RPC runtime is imported when a server first starts.
  const { createLspTools, LspWorkspace } = await import('@agent/tools-lsp');
  const workspace = new LspWorkspace({
    cwd,
    passEnv,
    protectedWrite: (real, roots) =>
      protectedWriteReason(real, roots, { ...options.protectedWrites, fs: nodeFileSystem }),
    ...(sandbox === undefined ? {} : { sandbox }),
    ...(ownServers ? {} : { workspaceExecutables: false }),
  });
  const installed = await workspace.installedServers();
  if (installed.length === 0) {
    // Said when the folder's own servers are what is left out, so the user knows why.
    if (!ownServers && (await new LspWorkspace({ cwd }).installedServers()).length > 0)
      options.log?.(
        trusted
          ? "lsp: this folder's own language servers (node_modules) run only in the sandbox, which is off (a file tool could rewrite them, and they would run outside it); none is installed elsewhere"
          : "lsp: this folder's own language servers (node_modules) run once you trust it (`agent trust`); none is installed elsewhere",
      );
    return undefined;
  }
  for (const tool of tools) {
    const execute = tool.execute.bind(tool);
    if (fileWriters.has(tool.name)) {
      tool.execute = async (args, context) => {
        const result = await execute(args, context);
        const path = (args as { path?: unknown }).path;
        if (result.isError !== true && typeof path === 'string')
          await workspace.notifyFilesChanged([path]).catch(() => undefined);
        return result;
      };
    } else if (tool.name === 'bash') {
      // A command may change any file: the running servers get what changed on disk.
      tool.execute = async (args, context) => {
        try {
          return await execute(args, context);
        } finally {
          await workspace.syncWorkspaceFiles().catch(() => undefined);
        }
      };
    }
  }
  const lspTools = createLspTools({ workspace });
  return {
    tools: lspTools,
    source: `lsp ${installed.map((server) => server.language).join(', ')} (${lspTools.length})`,
    close: () => workspace.close(),
  };
}
