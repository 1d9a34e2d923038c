import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { type ApiDocument, route, HttpProblem, problems } from '@baton/http';
import { DASHBOARD_FILES, loadDashboardAssets, type DashboardAsset, type DashboardFile } from './dashboard-assets.js';

export const DASHBOARD_PATH = '/ui/';

/**
 * The page may talk to this listener only, run only its own script and style, and never be
 * framed: a token typed into it stays with this origin.
 */
const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

/** The page as built says where its picture is only once served: the placeholder is filled in here. */
const CLUSTER_PATH_PLACEHOLDER = '{{CLUSTER_PATH}}';

function withClusterPath(assets: ReturnType<typeof loadDashboardAssets>, clusterPath: string): ReturnType<typeof loadDashboardAssets> {
  const page = assets?.get('index.html');
  if (!assets || !page) return assets;
  if (!/^\/[A-Za-z0-9/_-]*$/.test(clusterPath)) throw new Error(`the dashboard's cluster path ${JSON.stringify(clusterPath)} is not a plain absolute path`);
  const filled = new Map(assets);
  filled.set('index.html', { ...page, body: Buffer.from(page.body.toString('utf8').replace(CLUSTER_PATH_PLACEHOLDER, clusterPath)) });
  return filled;
}

const assetParam = z.object({ asset: z.enum(Object.keys(DASHBOARD_FILES) as [DashboardFile, ...DashboardFile[]]) });

/**
 * `GET /ui/`: the web dashboard, a static page bundled at build time. The page itself needs no
 * credential (a browser cannot send a bearer token on navigation); everything it shows comes
 * from the admin API, which it calls with the token the operator gives it.
 */
export function dashboardRouter(
  document: ApiDocument,
  options: {
    /** The route of this listener's cluster picture, which the page polls (the variant's own). */
    clusterPath: string;
    /** The bundle, read from disk when not given (tests give their own). @internal */
    load?: () => ReturnType<typeof loadDashboardAssets>;
  },
): Router {
  const router = new Router();
  const assets = withClusterPath((options.load ?? loadDashboardAssets)(), options.clusterPath);
  const serve = (ctx: Context, name: DashboardFile) => {
    const asset: DashboardAsset | undefined = assets?.get(name);
    if (!asset) {
      throw new HttpProblem({
        status: 503,
        type: 'dashboard-not-built',
        detail: 'the dashboard bundle is missing from this installation: run "npm run build"',
      });
    }
    ctx.set(SECURITY_HEADERS);
    // The page is small and changes with each build: always revalidate, never serve it stale.
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = asset.contentType;
    ctx.body = asset.body;
  };
  route(
    router,
    document,
    {
      method: 'get',
      path: DASHBOARD_PATH,
      summary: 'The web dashboard (asks for an admin token, then reads the admin API)',
      operationId: 'getDashboard',
      tags: ['dashboard'],
      // A browser cannot send a bearer token on navigation; the page asks for one.
      open: true,
      responses: {
        200: { description: 'The page', contentType: 'text/html', schema: z.string(), example: '<!doctype html><html>…</html>' },
        503: 'The bundle was not built',
      },
    },
    (ctx) => serve(ctx, 'index.html'),
  );
  // After /ui/, which answers /ui/ itself: the page's relative links need the trailing slash.
  route(
    router,
    document,
    {
      method: 'get',
      path: '/ui',
      summary: 'Redirects to the dashboard at /ui/',
      operationId: 'redirectToDashboard',
      tags: ['dashboard'],
      open: true,
      responses: { 308: 'Moved to /ui/' },
    },
    (ctx) => {
      ctx.redirect(DASHBOARD_PATH);
      ctx.status = 308;
    },
  );
  route(
    router,
    document,
    {
      method: 'get',
      path: '/ui/{asset}',
      summary: "The dashboard's script and style",
      operationId: 'getDashboardAsset',
      tags: ['dashboard'],
      open: true,
      params: { path: assetParam },
      responses: {
        200: { description: 'The file', contentType: ['text/javascript', 'text/css'], schema: z.string(), example: '/* the bundled file */' },
        404: 'No such file',
        503: 'The bundle was not built',
      },
    },
    (ctx) => {
      const parsed = assetParam.safeParse(ctx.params);
      if (!parsed.success) throw problems.notFound(`the dashboard has no file ${ctx.params.asset}`, {});
      serve(ctx, parsed.data.asset);
    },
  );
  return router;
}
