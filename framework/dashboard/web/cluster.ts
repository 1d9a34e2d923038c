import type { ClusterStatus } from '../../cluster/schemas.js';
import { api, ApiError } from './api.js';

/** Where each variant serves the picture; the node that served this page answers one of them. */
const PATHS = ['/v1/admin/cluster', '/availability/v1/cluster'];

export async function fetchPicture(token: string): Promise<ClusterStatus> {
  let last: unknown;
  for (const path of PATHS) {
    try {
      return await api<ClusterStatus>(token, 'GET', path);
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 404)) throw error;
      last = error;
    }
  }
  throw last;
}
