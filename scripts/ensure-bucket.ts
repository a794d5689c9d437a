// Creates the app's bucket if it does not exist yet. scripts/stack.sh runs it
// once MinIO answers, so the app and the tests can assume the bucket is there.
import { CreateBucketCommand, HeadBucketCommand, S3ServiceException } from '@aws-sdk/client-s3';
import { loadConfig } from '../lib/config.ts';
import { createS3Client } from '../lib/storage/s3-client.ts';

const config = loadConfig().s3;
const { endpoint, bucket } = config;
const { client: s3 } = createS3Client(config, { maxSockets: 1 });

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
