export { deliverWebhook } from './deliverWebhook.ts';
export { endKeyRotationGrace } from './endKeyRotationGrace.ts';
export { expireApiKey } from './expireApiKey.ts';
export { transferLifecycle } from './transferLifecycle.ts';
