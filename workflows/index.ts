export { deliverWebhook } from './deliverWebhook.ts';
export { endKeyRotationGrace } from './endKeyRotationGrace.ts';
export { expireApiKey } from './expireApiKey.ts';
export { intakeDocumentLifecycle } from './intakeDocumentLifecycle.ts';
export { intakeLifecycle } from './intakeLifecycle.ts';
export { runRule } from './runRule.ts';
export { transferLifecycle } from './transferLifecycle.ts';
