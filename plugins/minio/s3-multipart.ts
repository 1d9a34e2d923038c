import type { Logger } from '@baton/contracts';
import type { S3Bucket } from './s3-bucket.js';

/**
 * Uploads `body` in parts of `partSize`. The object appears only when the upload completes, so
 * a failure leaves the previous object (or none) in place; the abandoned upload is aborted, best
 * effort. Each part is retried on its own, and no earlier upload of the same name is resumed
 * (the minio client would resume one found by listing uploads, which may be another writer's).
 */
export async function putInParts(
  bucket: S3Bucket,
  objectName: string,
  body: Buffer,
  partSize: number,
  what: string,
  log: Logger,
): Promise<void> {
  const uploadId = await bucket.attempt(`starting the upload of ${what}`, () =>
    bucket.client.initiateNewMultipartUpload(bucket.name, objectName, {}),
  );
  try {
    const parts: { part: number; etag: string }[] = [];
    for (let part = 1, offset = 0; offset < body.byteLength; part++, offset += partSize) {
      const chunk = body.subarray(offset, offset + partSize);
      const { etag } = await bucket.attempt(`uploading part ${part} of ${what}`, () =>
        bucket.client.uploadPart(
          {
            bucketName: bucket.name,
            objectName,
            uploadID: uploadId,
            partNumber: part,
            headers: {},
          },
          chunk,
        ),
      );
      parts.push({ part, etag });
    }
    await bucket.attempt(`completing the upload of ${what}`, () =>
      bucket.client.completeMultipartUpload(bucket.name, objectName, uploadId, parts),
    );
  } catch (error) {
    await bucket.client
      .abortMultipartUpload(bucket.name, objectName, uploadId)
      .catch((abortError: unknown) =>
        log.warn(
          { err: (abortError as Error).message, objectName, uploadId },
          'could not abort an upload',
        ),
      );
    throw error;
  }
}
