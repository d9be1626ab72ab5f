import { generateKeyPairSync, randomBytes, sign, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import type { SmtpSubmissionConfig } from '../../config/index.js';

export interface SubmissionTls {
  cert: Buffer;
  key: Buffer;
  /** Where the certificate was read from. */
  certFile: string;
  /** A self-signed certificate Pigeon made (clients must be told to trust it). */
  generated: boolean;
}

const VALID_DAYS = 825;
/** A generated certificate this close to its end is replaced at start. */
const RENEW_DAYS = 30;

/**
 * The listeners' certificate: the configured PEM files, else a self-signed one kept in the data dir
 * (made on the first start, and again when it nears its end or names another host).
 */
export function submissionTls(settings: SmtpSubmissionConfig): SubmissionTls {
  if (settings.tls) {
    const { certFile, keyFile } = settings.tls;
    return {
      cert: readPem(certFile, 'SMTP_SUBMISSION_TLS_CERT'),
      key: readPem(keyFile, 'SMTP_SUBMISSION_TLS_KEY'),
      certFile,
      generated: false,
    };
  }
  const certFile = join(settings.generatedTlsDir, 'cert.pem');
  const keyFile = join(settings.generatedTlsDir, 'key.pem');
  if (existsSync(certFile) && existsSync(keyFile)) {
    const cert = readFileSync(certFile);
    if (stillGood(cert, settings.hostname)) return { cert, key: readFileSync(keyFile), certFile, generated: true };
  }
  const made = selfSignedCertificate(settings.hostname);
  mkdirSync(settings.generatedTlsDir, { recursive: true, mode: 0o700 });
  for (const [file, pem] of [
    [keyFile, made.key],
    [certFile, made.cert],
  ] as const) {
    writeFileSync(`${file}.tmp`, pem, { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
  }
  return { cert: Buffer.from(made.cert), key: Buffer.from(made.key), certFile, generated: true };
}

function readPem(file: string, variable: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new Error(`${variable}: cannot read ${file} (${(err as Error).message})`);
  }
}

function stillGood(pem: Buffer, hostname: string): boolean {
  try {
    const cert = new X509Certificate(pem);
    return Date.parse(cert.validTo) - Date.now() > RENEW_DAYS * 86_400_000 && cert.checkHost(hostname) !== undefined;
  } catch {
    return false;
  }
}

/**
 * A self-signed X.509 v3 certificate (ECDSA P-256, SHA-256) for `hostname`, written in DER by hand:
 * node's crypto signs but does not build certificates, and this is the only one Pigeon makes.
 * On `localhost` it also names 127.0.0.1 and ::1.
 */
export function selfSignedCertificate(hostname: string, now = new Date()): { cert: string; key: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const name = seq(set(seq(oid('2.5.4.3'), tlv(0x0c, Buffer.from(hostname.slice(0, 64))))));
  const notAfter = new Date(now.getTime() + VALID_DAYS * 86_400_000);
  const altNames = [hostname, ...(hostname === 'localhost' ? ['127.0.0.1', '::1'] : [])].map(altName);
  const tbs = seq(
    tlv(0xa0, integer(Buffer.from([2]))),
    integer(randomBytes(16)),
    ECDSA_SHA256,
    name,
    seq(utcTime(new Date(now.getTime() - 3_600_000)), utcTime(notAfter)),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    tlv(
      0xa3,
      seq(
        extension('2.5.29.19', seq()), // basicConstraints: not a CA
        extension('2.5.29.37', seq(oid('1.3.6.1.5.5.7.3.1'))), // extKeyUsage: serverAuth
        extension('2.5.29.17', seq(...altNames)),
      ),
    ),
  );
  const signature = sign('sha256', tbs, privateKey);
  const der = seq(tbs, ECDSA_SHA256, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const body = der
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .trimEnd();
  return {
    cert: `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`,
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

function tlv(tag: number, ...parts: Buffer[]): Buffer {
  const value = Buffer.concat(parts);
  const n = value.length;
  const length =
    n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), length, value]);
}

const seq = (...parts: Buffer[]) => tlv(0x30, ...parts);
const set = (...parts: Buffer[]) => tlv(0x31, ...parts);

/** A positive INTEGER: a leading zero byte when the high bit is set. */
const integer = (bytes: Buffer) =>
  tlv(0x02, bytes[0] !== undefined && bytes[0] >= 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);

function oid(dotted: string): Buffer {
  const [a = 0, b = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [40 * a + b];
  for (const n of rest) {
    const base128 = [n & 0x7f];
    for (let v = n >> 7; v > 0; v >>= 7) base128.unshift((v & 0x7f) | 0x80);
    bytes.push(...base128);
  }
  return tlv(0x06, Buffer.from(bytes));
}

const ECDSA_SHA256 = seq(oid('1.2.840.10045.4.3.2'));

const utcTime = (date: Date) => tlv(0x17, Buffer.from(`${date.toISOString().slice(2, 19).replace(/[-T:]/g, '')}Z`));

const extension = (id: string, value: Buffer) => seq(oid(id), tlv(0x04, value));

/** A subjectAltName entry: dNSName [2], or iPAddress [7]. */
function altName(name: string): Buffer {
  if (isIP(name) === 4) return tlv(0x87, Buffer.from(name.split('.').map(Number)));
  if (isIP(name) === 6) return tlv(0x87, ipv6Bytes(name));
  return tlv(0x82, Buffer.from(name));
}

function ipv6Bytes(address: string): Buffer {
  const [head = '', tail = ''] = address.split('::');
  const groups = (text: string) => (text ? text.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const left = groups(head);
  const right = groups(tail);
  const all = [...left, ...Array(8 - left.length - right.length).fill(0), ...right];
  return Buffer.from(all.flatMap((g) => [g >> 8, g & 0xff]));
}
