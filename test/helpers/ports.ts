export { freePort } from '../../lib/net/free-port.ts';
