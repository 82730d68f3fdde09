export { abandonedDirectories, processExists } from './abandoned-directories.js';
export {
  type AllowListProxy,
  type HostLookup,
  hostAllowed,
  startAllowListProxy,
} from './allow-list-proxy.js';
export { type RepositorySearchLimits, repositorySearchLimits } from './git-repositories.js';
export { type HiddenPatterns, patternSearchLimits } from './pattern-paths.js';
export {
  defaultMaxMemoryBytes,
  type SandboxLimitEvents,
  type SandboxLimits,
} from './resource-limits.js';
export {
  bubblewrapProblem,
  createSandbox,
  type Sandbox,
  type SandboxCommand,
  type SandboxMode,
  type SandboxNetwork,
  type SandboxOptions,
  type SandboxStatus,
  SandboxUnavailableError,
  type WrappedCommand,
} from './sandbox.js';
export {
  type HostCommand,
  type HostCommandExit,
  type HostCommandRequest,
  type SandboxHost,
  SandboxHostError,
} from './sandbox-host.js';
export {
  buildSeccompFilter,
  type SeccompArchitecture,
  type SeccompFilterOptions,
  seccompArchitecture,
} from './seccomp-filter.js';
export { defaultSecretPaths, environmentFilePaths, systemSecretPaths } from './secret-paths.js';
export { homeStartupFiles } from './startup-files.js';
