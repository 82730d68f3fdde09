export { abandonedDirectories, processExists } from './abandoned-directories.js';
export {
  type AllowListProxy,
  type HostLookup,
  hostAllowed,
  startAllowListProxy,
} from './allow-list-proxy.js';
export {
  type AutoRunFile,
  currentHooksDirectories,
  hooksDirectories,
  workspaceAutoRunFiles,
} from './auto-run-files.js';
export { bubblewrapProblem } from './bubblewrap-lookup.js';
export { credentialsInSharedFiles, type FileCredentials } from './credential-free-copies.js';
export {
  type GitConfigCredentials,
  type GitConfigPlaces,
  gitConfigFiles,
  gitConfigWithoutCredentials,
} from './git-config-credentials.js';
export {
  gitConfigIncludePaths,
  includedConfigFiles,
  missingIncludedConfigFiles,
} from './git-config-includes.js';
export {
  findRepositories,
  type RepositorySearch,
  type RepositorySearchLimits,
  repositorySearchLimits,
} from './git-repositories.js';
export { lefthookExtendedFiles } from './lefthook-extends.js';
export { type HiddenPatterns, patternSearchLimits } from './pattern-paths.js';
export {
  defaultMaxMemoryBytes,
  type SandboxLimitEvents,
  type SandboxLimits,
} from './resource-limits.js';
export { createSandbox } from './sandbox.js';
export { SandboxUnavailableError } from './sandbox-errors.js';
export {
  type HostCommand,
  type HostCommandExit,
  type HostCommandRequest,
  type SandboxHost,
  SandboxHostError,
} from './sandbox-host.js';
export type {
  Sandbox,
  SandboxCommand,
  SandboxStatus,
  WrappedCommand,
} from './sandbox-interface.js';
export type { SandboxMode, SandboxNetwork, SandboxOptions } from './sandbox-options.js';
export {
  buildSeccompFilter,
  type SeccompArchitecture,
  type SeccompFilterOptions,
  seccompArchitecture,
} from './seccomp-filter.js';
export { defaultSecretPaths, environmentFilePaths, systemSecretPaths } from './secret-paths.js';
export {
  type StartupFileCredentials,
  startupFilesWithVariables,
  startupFileWithoutCredentials,
} from './startup-file-credentials.js';
export { homeStartupFiles } from './startup-files.js';
export {
  killGroupButLeader,
  prctlSyscallNumber,
  subreaperSource,
  systemPerl,
} from './subreaper.js';
export { type TrustedProgram, trustedProgram } from './trusted-program.js';
