export { endKeyRotationGrace } from './endKeyRotationGrace.ts';
export { expireApiKey } from './expireApiKey.ts';
export { transferLifecycle } from './transferLifecycle.ts';
