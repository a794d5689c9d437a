import test from 'ava';
import { minioStoppedDuringUpload } from './minio-stopped-upload.ts';

test('MinIO killed during a 64 MiB upload: a retryable answer, the offset kept, the rest resumed byte for byte', async (t) => {
  await minioStoppedDuringUpload(t, 64 * 1024 * 1024);
});
