import type { Duplex } from 'node:stream';
import { HttpProblem, PROBLEM_CONTENT_TYPE } from './problem.js';

/**
 * What a request the HTTP parser refused before any route saw it is answered with: a header
 * section over Node's limit, a malformed request line or header, a request that took too long
 * to arrive. Node would write a bare status line; every other refusal of a client's mistake is
 * `application/problem+json`, so these are too.
 */
export function clientErrorProblem(error: NodeJS.ErrnoException): HttpProblem {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new HttpProblem({
        status: 431,
        type: 'headers-too-large',
        detail: 'the request line and headers exceed the server limit: send a shorter URL (page with after/limit) or fewer headers',
      });
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new HttpProblem({ status: 413, type: 'body-too-large', detail: 'the chunk extensions of the request body exceed the server limit' });
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new HttpProblem({ status: 408, type: 'request-timeout', detail: 'the request did not arrive in time: send it again' });
    default:
      return new HttpProblem({ status: 400, type: 'malformed-request', detail: 'the request is not valid HTTP/1.1 (request line, header or framing): fix the client' });
  }
}

/**
 * The server's 'clientError' handler: answers on the raw socket when nothing was written on it
 * yet (no request or response object exists at this point), then closes the connection, as
 * Node does by default. A reset connection has no one left to answer.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex & { bytesWritten?: number }): void {
  if (error.code !== 'ECONNRESET' && socket.writable && !socket.bytesWritten) {
    const problem = clientErrorProblem(error);
    const body = JSON.stringify(problem.body());
    socket.write(
      `HTTP/1.1 ${problem.status} ${problem.title}\r\n` +
        `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'X-Content-Type-Options: nosniff\r\n' +
        'Connection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy();
}
