import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { freePort } from './ports.js';

/** What the issuer gets wrong in the ID token it hands out next (`valid`: nothing). */
export type IdTokenFault = 'valid' | 'wrong-nonce' | 'other-audience' | 'other-key' | 'expired' | 'token-endpoint-down';

export interface ForgedIssuer {
  issuer: string;
  clientId: string;
  clientSecret: string;
  fault: IdTokenFault;
  email: string;
  emailVerified: boolean;
  stop: () => Promise<void>;
}

interface PendingCode {
  nonce: string;
  codeChallenge: string;
  redirectUri: string;
}

/**
 * A minimal OpenID Connect issuer over real HTTP whose ID tokens can be wrong on purpose, one way
 * at a time: the cases a certified provider never produces (a token for another client, signed
 * with a key it does not publish, expired, with another nonce). Its authorization endpoint signs
 * the browser in at once; the token endpoint checks the PKCE verifier and client secret like a
 * real one.
 */
export async function startForgedIssuer(): Promise<ForgedIssuer> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const published = await generateKeyPair('RS256');
  const unpublished = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(published.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const codes = new Map<string, PendingCode>();
  const state: ForgedIssuer = {
    issuer,
    clientId: 'pigeon-forged',
    clientSecret: 'forged-client-secret',
    fault: 'valid',
    email: 'someone@example.com',
    emailVerified: true,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  async function idToken(pending: PendingCode): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const expired = state.fault === 'expired';
    return new SignJWT({
      email: state.email,
      email_verified: state.emailVerified,
      nonce: state.fault === 'wrong-nonce' ? 'a-nonce-from-another-sign-in' : pending.nonce,
    })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(issuer)
      .setSubject('forged-subject-1')
      .setAudience(state.fault === 'other-audience' ? 'another-client' : state.clientId)
      .setIssuedAt(expired ? now - 7200 : now)
      .setExpirationTime(expired ? now - 3600 : now + 300)
      .sign(state.fault === 'other-key' ? unpublished.privateKey : published.privateKey);
  }

  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === '/.well-known/openid-configuration') {
      return json(200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_post'],
      });
    }
    if (url.pathname === '/jwks') return json(200, { keys: [jwk] });
    if (url.pathname === '/authorize') {
      const q = url.searchParams;
      if (q.get('client_id') !== state.clientId || q.get('code_challenge_method') !== 'S256') {
        return json(400, { error: 'invalid_request' });
      }
      const code = randomBytes(16).toString('base64url');
      const redirectUri = q.get('redirect_uri') ?? '';
      codes.set(code, { nonce: q.get('nonce') ?? '', codeChallenge: q.get('code_challenge') ?? '', redirectUri });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', q.get('state') ?? '');
      res.writeHead(302, { location: back.href });
      return res.end();
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      if (state.fault === 'token-endpoint-down') return json(503, { error: 'temporarily_unavailable' });
      const form = new URLSearchParams(await readBody(req));
      const pending = codes.get(form.get('code') ?? '');
      codes.delete(form.get('code') ?? '');
      const verifier = form.get('code_verifier') ?? '';
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      if (
        !pending ||
        challenge !== pending.codeChallenge ||
        form.get('client_secret') !== state.clientSecret ||
        form.get('redirect_uri') !== pending.redirectUri
      ) {
        return json(400, { error: 'invalid_grant' });
      }
      return json(200, {
        access_token: randomBytes(16).toString('base64url'),
        token_type: 'Bearer',
        expires_in: 300,
        id_token: await idToken(pending),
      });
    }
    json(404, { error: 'not_found' });
  });
  server.listen(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  return state;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
