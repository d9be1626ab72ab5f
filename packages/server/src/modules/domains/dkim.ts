import { createPrivateKey, generateKeyPair, type KeyObject, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

const generate = promisify(generateKeyPair);

/** A fresh RSA-2048 key pair: the PEM private key and the base64 public key for the DNS record. */
export async function generateDkimKeys() {
  const { privateKey, publicKey } = await generate('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return {
    privateKey,
    publicKey: Buffer.from(publicKey).toString('base64'),
    selector: `pigeon${randomBytes(4).toString('hex')}`,
  };
}

export const dkimRecordValue = (publicKey: string) => `v=DKIM1; k=rsa; p=${publicKey}`;

const parsed = new Map<string, KeyObject>();

/** nodemailer re-parses a PEM key for every message; a parsed KeyObject signs about twice as fast. */
export function dkimKeyObject(pem: string): KeyObject {
  let key = parsed.get(pem);
  if (!key) {
    key = createPrivateKey(pem);
    parsed.set(pem, key);
  }
  return key;
}
