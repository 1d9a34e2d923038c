import test from 'ava';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { PeerPoster } from '@baton/plugin-raft/internal/http-post.js';

async function serve(handler: (req: IncomingMessage, body: string, answer: (status: number, text: string) => void) => void): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handler(req, Buffer.concat(chunks).toString('utf8'), (status, text) => res.writeHead(status).end(text)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return { server, url: `http://127.0.0.1:${address.port}` };
}

test('posts the body with its headers and returns status and text, reusing one kept-alive connection', async (t) => {
  const sockets = new Set<unknown>();
  const { server, url } = await serve((req, body, answer) => {
    sockets.add(req.socket);
    answer(200, `${req.headers['x-test']}:${req.headers['content-length']}:${body}`);
  });
  const poster = new PeerPoster();
  try {
    for (let i = 0; i < 3; i++) {
      const answer = await poster.post(`${url}/p`, 'héllo', { 'x-test': 'yes' });
      t.deepEqual(answer, { status: 200, text: 'yes:6:héllo' });
    }
    t.is(sockets.size, 1);
  } finally {
    poster.destroy();
    server.closeAllConnections();
    server.close();
  }
});

test('a non-2xx status is returned, not thrown; an aborted post and an unreachable peer reject', async (t) => {
  const { server, url } = await serve((req, _body, answer) => {
    if (req.url === '/hang') return; // never answers
    answer(503, 'busy');
  });
  const poster = new PeerPoster();
  try {
    t.deepEqual(await poster.post(`${url}/x`, '{}', {}), { status: 503, text: 'busy' });
    const controller = new AbortController();
    const pending = poster.post(`${url}/hang`, '{}', {}, controller.signal);
    controller.abort(new Error('gave up'));
    await t.throwsAsync(pending, { message: 'gave up' });
    const already = new AbortController();
    already.abort(new Error('before sending'));
    await t.throwsAsync(poster.post(`${url}/x`, '{}', {}, already.signal), { message: 'before sending' });
  } finally {
    poster.destroy();
    server.closeAllConnections();
    server.close();
  }
  await t.throwsAsync(new PeerPoster().post(url.replace(/:\d+$/, ':1'), '{}', {}));
});
