import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/index.js';
import { selfSignedCertificate, submissionTls } from './certificate.js';

describe('the generated certificate', () => {
  it('is a valid self-signed certificate for the host (and loopback on localhost), signed by its own key', () => {
    const { cert } = selfSignedCertificate('localhost');
    const x509 = new X509Certificate(cert);
    expect(x509.verify(x509.publicKey)).toBe(true);
    expect(x509.subject).toBe('CN=localhost');
    expect(x509.issuer).toBe('CN=localhost');
    expect(x509.checkHost('localhost')).toBe('localhost');
    expect(x509.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(x509.checkIP('::1')).toBe('::1');
    expect(x509.ca).toBe(false);
    expect(Date.parse(x509.validTo) - Date.now()).toBeGreaterThan(800 * 86_400_000);
    const other = new X509Certificate(selfSignedCertificate('mail.example.com').cert);
    expect(other.checkHost('mail.example.com')).toBe('mail.example.com');
    expect(other.checkIP('127.0.0.1')).toBeUndefined();
  });

  it('is made once into the data dir (0600) and kept across starts; configured files are used as they are', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'pigeon-cert-'));
    const settings = loadConfig({ PIGEON_DATA_DIR: dataDir }).smtpSubmission;
    const first = submissionTls(settings);
    expect(first.generated).toBe(true);
    expect(statSync(first.certFile).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, 'smtp-submission', 'key.pem')).mode & 0o777).toBe(0o600);
    expect(submissionTls(settings).cert.equals(first.cert)).toBe(true);
    // A host the kept certificate does not name: a new one.
    const renamed = loadConfig({ PIGEON_DATA_DIR: dataDir, PUBLIC_URL: 'https://mail.example.com' }).smtpSubmission;
    expect(submissionTls(renamed).cert.equals(first.cert)).toBe(false);

    const given = loadConfig({
      PIGEON_DATA_DIR: dataDir,
      SMTP_SUBMISSION_TLS_CERT: first.certFile,
      SMTP_SUBMISSION_TLS_KEY: join(dataDir, 'smtp-submission', 'key.pem'),
    }).smtpSubmission;
    const used = submissionTls(given);
    expect(used.generated).toBe(false);
    expect(used.cert.equals(readFileSync(first.certFile))).toBe(true);
    const missing = loadConfig({
      PIGEON_DATA_DIR: dataDir,
      SMTP_SUBMISSION_TLS_CERT: join(dataDir, 'nope.pem'),
      SMTP_SUBMISSION_TLS_KEY: join(dataDir, 'nope.key'),
    }).smtpSubmission;
    expect(() => submissionTls(missing)).toThrow(/SMTP_SUBMISSION_TLS_CERT: cannot read .*nope\.pem/);
    expect(() => loadConfig({ PIGEON_DATA_DIR: dataDir, SMTP_SUBMISSION_TLS_CERT: 'x.pem' })).toThrow(
      /SMTP_SUBMISSION_TLS_CERT and SMTP_SUBMISSION_TLS_KEY: set both/,
    );
  });

  it('is read by OpenSSL as an ECDSA certificate with its names', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pigeon-cert-'));
    const file = join(dir, 'cert.pem');
    writeFileSync(file, selfSignedCertificate('localhost').cert);
    const text = execFileSync('openssl', ['x509', '-in', file, '-noout', '-text'], { encoding: 'utf8' });
    expect(text).toContain('ecdsa-with-SHA256');
    expect(text).toMatch(/DNS:localhost, IP Address:127\.0\.0\.1, IP Address:0:0:0:0:0:0:0:1/);
    expect(text).toContain('TLS Web Server Authentication');
  });
});
