export { type AllowListProxy, hostAllowed, startAllowListProxy } from './allow-list-proxy.js';
export {
  bubblewrapProblem,
  createSandbox,
  defaultSecretPaths,
  type Sandbox,
  type SandboxCommand,
  type SandboxMode,
  type SandboxNetwork,
  type SandboxOptions,
  type SandboxStatus,
  SandboxUnavailableError,
} from './sandbox.js';
