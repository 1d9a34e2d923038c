import {
  UnsupportedOperationError,
  type ListPage,
  type ObjectInfo,
} from '@baton/contracts';
import { decodeKey } from './object-key-codec.js';
import type { S3Bucket } from './s3-bucket.js';

/** S3 answers at most this many names per listing request. */
const S3_PAGE_LIMIT = 1000;

export interface ListRequest {
  /** The contract's prefix (for checks and messages) and its encoded name prefix. */
  prefix: string;
  namePrefix: string;
  /** The store's keyPrefix: names start with it, keys do not. */
  keyPrefix: string;
  /** The encoded startAfter ('' for none). */
  after: string;
  limit: number;
}

/**
 * Pages on the server. The key codec keeps S3's order equal to the contract's, so S3's
 * start-after is the contract's startAfter. Each request asks for one name more than the page
 * needs: seeing it is how we know that `next` is due.
 */
export async function listPaged(bucket: S3Bucket, request: ListRequest): Promise<ListPage> {
  const objects: ObjectInfo[] = [];
  let cursor = request.after;
  for (;;) {
    const want = Math.min(S3_PAGE_LIMIT, request.limit - objects.length + 1);
    const page = await listNames(bucket, request, cursor, want);
    for (const item of page.items) {
      cursor = item.name;
      if (item.key === undefined) continue;
      if (objects.length === request.limit)
        return { objects, next: objects[objects.length - 1].key };
      objects.push({ key: item.key, size: item.size });
    }
    if (!page.truncated || page.items.length === 0) return { objects };
  }
}

/**
 * For servers that list out of order (s3rver walks directories): one request for every name
 * under the prefix, sorted here. More names than one request returns cannot be listed correctly
 * on such a server, so that is refused rather than answered with gaps.
 */
export async function listWhole(bucket: S3Bucket, request: ListRequest): Promise<ListPage> {
  const page = await listNames(bucket, request, request.after, S3_PAGE_LIMIT);
  if (page.truncated) {
    throw new UnsupportedOperationError(
      `listing more than ${S3_PAGE_LIMIT} keys under ${JSON.stringify(request.prefix)} on a server that lists out of order (serverSortsListings: false)`,
      bucket.storeName,
    );
  }
  const all = page.items
    .flatMap((item) =>
      item.key === undefined ? [] : [{ name: item.name, key: item.key, size: item.size }],
    )
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const objects = all.slice(0, request.limit).map(({ key, size }) => ({ key, size }));
  return all.length > request.limit
    ? { objects, next: objects[objects.length - 1].key }
    : { objects };
}

/** One listing request; `key` is undefined for names this store did not write. */
async function listNames(bucket: S3Bucket, request: ListRequest, after: string, want: number) {
  const page = await bucket.attempt(`listing ${JSON.stringify(request.prefix)}`, () =>
    bucket.client.listObjectsV2Query(bucket.name, request.namePrefix, '', '', want, after),
  );
  const items = page.objects.flatMap((o) => {
    if (o.name === undefined) return [];
    const key = decodeKey(o.name.slice(request.keyPrefix.length));
    const ours = key !== undefined && key.startsWith(request.prefix);
    return [{ name: o.name, key: ours ? key : undefined, size: Number(o.size) }];
  });
  return { items, truncated: page.isTruncated };
}
