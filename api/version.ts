/** The contract revision served (spec: Versioning). */
export const API_REVISION = '2026-05-14';
/** The version label of the machine-readable description. */
export const OPENAPI_DOCUMENT_VERSION = '1.0.0';
