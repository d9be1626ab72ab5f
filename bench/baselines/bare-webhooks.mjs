// The bare program the event-webhook bench compares Pigeon with: POSTs the same payloads, signed
// the Standard Webhooks way (HMAC-SHA256 per request, as Pigeon does), to URL with CONCURRENCY
// requests in flight, over node:http with a keep-alive agent (CLIENT=undici: an undici Pool of
// CONCURRENCY connections, the client Pigeon sends with). Reads `{ secret, messages: [{ id, body }] }`
// from FILE; prints `result {…}` when every request has been answered 2xx (with its own CPU seconds
// and the whole machine's busy CPU seconds at start and end, `machineAtStart`/`machineAtEnd`).
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { Pool } from 'undici';
import { machineBusyCpuSeconds } from '../lib/process.mjs';
import { postSigned, webhookSigner } from './_webhook-sign.mjs';

const { secret, messages } = JSON.parse(readFileSync(process.env.FILE, 'utf8'));
const url = new URL(process.env.URL);
const concurrency = Number(process.env.CONCURRENCY ?? 16);
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });

const pool = process.env.CLIENT === 'undici' ? new Pool(url.origin, { connections: concurrency }) : undefined;

const sign = webhookSigner(secret);

const postUndici = ({ id, body }) => postSigned(pool, url, sign, id, body);

function postHttp({ id, body }) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...sign(id, body),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode >= 200 && res.statusCode < 300 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const post = pool ? postUndici : postHttp;
const cpu0 = process.cpuUsage();
const machineAtStart = machineBusyCpuSeconds();
const startAt = performance.timeOrigin + performance.now();
let next = 0;
let failed = 0;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < messages.length) {
      const message = messages[next++];
      await post(message).catch(() => failed++);
    }
  }),
);
const endAt = performance.timeOrigin + performance.now();
const machineAtEnd = machineBusyCpuSeconds();
const cpu = process.cpuUsage(cpu0);
const sent = messages.length - failed;
console.log(
  `result ${JSON.stringify({ sent, failed, startAt, endAt, perSec: sent / ((endAt - startAt) / 1000), cpuSeconds: (cpu.user + cpu.system) / 1e6, machineAtStart, machineAtEnd })}`,
);
agent.destroy();
await pool?.close();
