import type { ClusterStatus } from '@baton/cluster';
import { answer } from './api.js';
import { authorityControl, streamNode } from './node-clients.js';

const STREAM_PICTURE = '/v1/admin/cluster';
const AUTHORITY_PICTURE = '/availability/v1/cluster';

/**
 * Where the node that served this page serves its cluster picture (each variant has its own
 * route): the page is told once, in its HTML, so no poll asks the other variant's route.
 */
export function picturePath(): typeof STREAM_PICTURE | typeof AUTHORITY_PICTURE {
  const path = document.querySelector<HTMLMetaElement>('meta[name=baton-cluster-path]')?.content ?? '';
  if (path === STREAM_PICTURE || path === AUTHORITY_PICTURE) return path;
  throw new Error('this page was not served by a Baton node: it does not say where the cluster picture is');
}

export function fetchPicture(token: string): Promise<ClusterStatus> {
  return picturePath() === STREAM_PICTURE ? answer(streamNode(token).GET(STREAM_PICTURE)) : answer(authorityControl(token).GET(AUTHORITY_PICTURE));
}
