import type { Logger } from '@baton/contracts';
import type { S3Bucket } from './s3-bucket.js';
import { classifyS3Error } from './s3-errors.js';

/**
 * Whether the server honours `If-None-Match: *` on PUT. Puts a probe object twice, the second
 * time create-only: a server that honours the condition refuses the second put; one that ignores
 * it (s3rver) accepts it. The probe is removed afterwards. `probeName` must be a name no key
 * encodes to, so the probe never shows up as a key.
 */
export async function probeConditionalPut(
  bucket: S3Bucket,
  probeName: string,
  log: Logger,
): Promise<boolean> {
  const body = Buffer.from('probe');
  await bucket.attempt('probing create-only puts', () =>
    bucket.client.putObject(bucket.name, probeName, body, body.byteLength),
  );
  try {
    return await bucket.attempt('probing create-only puts', async () => {
      try {
        await bucket.client.putObject(bucket.name, probeName, body, body.byteLength, {
          'If-None-Match': '*',
        });
        return false;
      } catch (error) {
        if (classifyS3Error(error) === 'precondition') return true;
        if ((error as { code?: string }).code === 'NotImplemented') return false;
        throw error;
      }
    });
  } finally {
    await bucket
      .attempt('removing the probe', () => bucket.client.removeObject(bucket.name, probeName))
      .catch((error: unknown) =>
        log.warn({ err: (error as Error).message, probeName }, 'could not remove the probe object'),
      );
  }
}
