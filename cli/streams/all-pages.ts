import { cliCall, type StreamApi } from '../api-client.js';

/** Every page of a paged admin listing, asking for the next (`after`) until one says there is none. */
async function followPages<Page extends { next?: string | null }>(page: (after: string | undefined) => Promise<Page>): Promise<Page[]> {
  const pages: Page[] = [];
  let after: string | undefined;
  do {
    const one = await page(after);
    pages.push(one);
    after = one.next ?? undefined;
  } while (after !== undefined);
  return pages;
}

const cursor = (after: string | undefined) => (after === undefined ? {} : { query: { after } });

/** Every registered node (GET /v1/admin/nodes, the pages followed to the end). */
export async function allNodes(client: StreamApi) {
  const pages = await followPages((after) => cliCall(client.GET('/v1/admin/nodes', { params: cursor(after) })));
  return { nodes: pages.flatMap((p) => p.nodes) };
}

/** Every pending transfer, oldest first (GET /v1/admin/transfers, the pages followed to the end). */
export async function allTransfers(client: StreamApi) {
  const pages = await followPages((after) => cliCall(client.GET('/v1/admin/transfers', { params: cursor(after) })));
  return { transfers: pages.flatMap((p) => p.transfers) };
}
