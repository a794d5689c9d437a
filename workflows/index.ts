export { endKeyRotationGrace } from './endKeyRotationGrace.ts';
export { expireApiKey } from './expireApiKey.ts';
