import {
  beginExport,
  collectFamily,
  type ExportDeps,
  expireExport,
  failExport,
  retentionOf,
  sealExport,
} from '../lib/gdpr/collect.ts';

// The gdprExport workflow's steps (lib/gdpr/collect.ts); each may run again and finds its work done
// or does it once more, the same way.

export function createGdprActivities(deps: ExportDeps) {
  return {
    beginGdprExport: (exportId: string) => beginExport(deps, exportId),
    collectGdprExportFamily: (exportId: string, family: string, index: number) =>
      collectFamily(deps, exportId, family, index),
    sealGdprExport: (exportId: string, families: string[]) => sealExport(deps, exportId, families),
    gdprExportRetention: (exportId: string) => retentionOf(deps, exportId),
    failGdprExport: (exportId: string, message: string) => failExport(deps, exportId, message),
    expireGdprExport: (exportId: string) => expireExport(deps, exportId),
  };
}
