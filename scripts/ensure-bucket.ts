// Creates the app's bucket if it does not exist yet. scripts/stack.sh runs it
// once MinIO answers, so the app and the tests can assume the bucket is there.
import { CreateBucketCommand, HeadBucketCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';

const endpoint = process.env.S3_ENDPOINT ?? 'http://127.0.0.1:9000';
const bucket = process.env.S3_BUCKET ?? 'valise';

const s3 = new S3Client({
  endpoint,
  region: process.env.S3_REGION ?? 'eu-west-1',
  // MinIO addresses buckets by path; virtual-host style would need DNS.
  forcePathStyle: true,
  credentials: {
    accessKeyId: process.env.S3_ACCESS_KEY_ID ?? 'valise',
    secretAccessKey: process.env.S3_SECRET_ACCESS_KEY ?? 'valise-dev-secret',
  },
});

async function bucketExists(): Promise<boolean> {
  try {
    await s3.send(new HeadBucketCommand({ Bucket: bucket }));
    return true;
  } catch (error) {
    // HeadBucket has no body, so a missing bucket shows only as a 404.
    if (error instanceof S3ServiceException && error.$metadata.httpStatusCode === 404) {
      return false;
    }
    throw error;
  }
}

async function main(): Promise<void> {
  if (await bucketExists()) {
    console.error(`bucket ${bucket}: exists at ${endpoint}`);
    return;
  }
  try {
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (error) {
    // Another process created it between our check and now: fine.
    if (!(error instanceof S3ServiceException)) throw error;
    if (error.name !== 'BucketAlreadyOwnedByYou') throw error;
  }
  console.error(`bucket ${bucket}: created at ${endpoint}`);
}

main().catch((error: unknown) => {
  // Bodiless S3 errors (HeadBucket) only say "UnknownError": add the status.
  const message =
    error instanceof S3ServiceException
      ? `${error.name}: ${error.message} (HTTP ${error.$metadata.httpStatusCode})`
      : String(error);
  console.error(`ensure-bucket: ${bucket} at ${endpoint}: ${message}`);
  process.exitCode = 1;
});
