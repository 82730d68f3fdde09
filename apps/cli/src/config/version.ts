/**
 * The CLI's version and the versions of the `@agent/*` packages bundled into it, fixed at build
 * time (tsup's `define`), so `--version` reads no file and loads no package.
 */
declare const __AGENT_VERSIONS__: string | undefined;

/** `agent 0.1.0` and one `@agent/<pkg> <version>` line per bundled package. */
export const versionsText: string =
  typeof __AGENT_VERSIONS__ === 'string' ? __AGENT_VERSIONS__ : 'agent (unbundled)\n';
