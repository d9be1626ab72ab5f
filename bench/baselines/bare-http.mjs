// Bare node:http baseline: answers every request (GET or POST, any path) with a small JSON body,
// reading the request body first, so a scenario's own request can be replayed against it.
import { createServer } from 'node:http';

const body = JSON.stringify({ status: 'ok', version: '0.0.0' });
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`bare-http listening on http://127.0.0.1:${server.address().port}`);
});
const stop = () => server.close(() => process.exit(0)) && server.closeAllConnections();
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
