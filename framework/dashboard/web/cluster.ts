import type { ClusterStatus } from '@baton/cluster';
import { api } from './api.js';

/**
 * Where the node that served this page serves its cluster picture (each variant has its own
 * route): the page is told once, in its HTML, so no poll asks the other variant's route.
 */
export function picturePath(): string {
  const path = document.querySelector<HTMLMetaElement>('meta[name=baton-cluster-path]')?.content ?? '';
  if (!path.startsWith('/')) throw new Error('this page was not served by a Baton node: it does not say where the cluster picture is');
  return path;
}

export function fetchPicture(token: string): Promise<ClusterStatus> {
  return api<ClusterStatus>(token, 'GET', picturePath());
}
