/**
 * The loopback HTTP ceiling of the S3 bench: plain node:http, no S3, no
 * disk, run as its own process (`node http-ceiling.ts <port> <bigBytes>`)
 * so the bench measures its CPU the way it measures the svc server's.
 *
 *   GET /ready       200 (start-up probe)
 *   GET …/big…       <bigBytes> body (a path with `/big`), 1 MiB writes with back-pressure
 *   GET other        4 KiB body
 *   PUT anything     body drained, 200
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';

const port = Number(process.argv[2]);
const big = randomBytes(Number(process.argv[3] ?? 0));
const small = randomBytes(4096);
const MiB = 1 << 20;

const server = createServer({ requestTimeout: 0 }, (req, res) => {
  if (req.method === 'PUT') {
    req.on('data', () => undefined);
    req.on('end', () => {
      res.writeHead(200, { etag: '"x"', 'content-length': 0 });
      res.end();
    });
    return;
  }
  if (req.url?.includes('/big')) {
    res.writeHead(200, { 'content-length': big.length, etag: '"x"' });
    let off = 0;
    const pump = (): void => {
      while (off < big.length) {
        const ok = res.write(big.subarray(off, off + MiB));
        off += MiB;
        if (!ok) {
          res.once('drain', pump);
          return;
        }
      }
      res.end();
    };
    pump();
    return;
  }
  res.writeHead(200, { 'content-length': small.length, etag: '"x"' });
  res.end(small);
});
server.listen(port, '127.0.0.1');
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
