export { foreignListener, fromThisUser, loopbackPeer } from './loopback-peer.js';
export { loopbackPort } from './loopback-url.js';
