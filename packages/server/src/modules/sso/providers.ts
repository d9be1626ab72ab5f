import * as client from 'openid-client';
import type { SsoProviderConfig } from '../../config/index.js';
import { isLoopbackHttp } from '../../config/index.js';

/** Seconds each request to a provider may take (discovery, keys, token, user info). */
const PROVIDER_TIMEOUT_SECONDS = 10;

const GITHUB = {
  issuer: 'https://github.com',
  authorization_endpoint: 'https://github.com/login/oauth/authorize',
  token_endpoint: 'https://github.com/login/oauth/access_token',
};
const GITHUB_API = 'https://api.github.com';

/** Who the provider says signed in. `emailVerified` is true only when the provider says so. */
export interface ProviderProfile {
  subject: string;
  email: string | undefined;
  emailVerified: boolean;
}

/** The values one sign-in attempt carries from the start to the callback. */
export interface AttemptSecrets {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** The provider could not be reached or failed (5xx, timeout): nobody's fault but its own. */
export class ProviderUnavailable extends Error {}

/** The provider answered, but not with what a sign-in needs. */
export class ProviderAnswerRefused extends Error {}

/**
 * One provider's client (openid-client, certified): OpenID Connect providers are discovered on
 * first use and the result kept, GitHub's fixed OAuth 2 endpoints are configured directly.
 * A failed discovery is not kept, so the next sign-in tries again.
 */
export class ProviderClient {
  private configuration: Promise<client.Configuration> | undefined;

  constructor(
    readonly settings: SsoProviderConfig,
    /** Read when used: with PORT=0 the public URL is known only once the server listens. */
    private readonly redirectUri: () => string,
  ) {}

  async authorizationUrl(secrets: AttemptSecrets): Promise<URL> {
    const config = await this.config();
    const params: Record<string, string> = {
      redirect_uri: this.redirectUri(),
      scope: this.settings.scopes,
      state: secrets.state,
      code_challenge: await client.calculatePKCECodeChallenge(secrets.codeVerifier),
      code_challenge_method: 'S256',
    };
    if (this.settings.protocol === 'oidc') params.nonce = secrets.nonce;
    return client.buildAuthorizationUrl(config, params);
  }

  /**
   * Exchanges the code (PKCE verifier, state checked) and returns the verified profile. For OpenID
   * Connect the ID token is required and verified: issuer, audience, expiry, nonce and its
   * signature against the provider's published keys.
   */
  async profile(callbackUrl: URL, secrets: AttemptSecrets): Promise<ProviderProfile> {
    const config = await this.config();
    return guardProvider(async () => {
      if (this.settings.protocol === 'github') {
        const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
          pkceCodeVerifier: secrets.codeVerifier,
          expectedState: secrets.state,
        });
        return githubProfile(config, tokens.access_token);
      }
      const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: secrets.codeVerifier,
        expectedState: secrets.state,
        expectedNonce: secrets.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      if (!claims) throw new ProviderAnswerRefused('the token response has no ID token');
      // Many providers (oidc-provider's default, some Keycloak setups) put the email in userinfo only;
      // fetchUserInfo requires its `sub` to be the ID token's.
      const inToken = typeof claims.email === 'string' && claims.email_verified !== undefined;
      const info = inToken ? claims : await client.fetchUserInfo(config, tokens.access_token, claims.sub);
      return {
        subject: claims.sub,
        email: typeof info.email === 'string' ? info.email : undefined,
        emailVerified: info.email_verified === true || info.email_verified === 'true',
      };
    });
  }

  private config(): Promise<client.Configuration> {
    this.configuration ??= guardProvider(() => this.createConfig());
    this.configuration.catch(() => {
      this.configuration = undefined;
    });
    return this.configuration;
  }

  private async createConfig(): Promise<client.Configuration> {
    const { settings } = this;
    const insecure = isLoopbackHttp(settings.issuer);
    if (settings.protocol === 'github') {
      const config = new client.Configuration(GITHUB, settings.clientId, settings.clientSecret);
      config.timeout = PROVIDER_TIMEOUT_SECONDS;
      return config;
    }
    const config = await client.discovery(
      new URL(settings.issuer),
      settings.clientId,
      settings.clientSecret,
      undefined,
      {
        timeout: PROVIDER_TIMEOUT_SECONDS,
        execute: [
          // Without it openid-client trusts the TLS channel and skips the ID token's signature.
          client.enableNonRepudiationChecks,
          ...(insecure ? [client.allowInsecureRequests] : []),
        ],
      },
    );
    return config;
  }
}

/** GitHub has no ID token: the account id from /user, the primary address only if GitHub verified it. */
async function githubProfile(config: client.Configuration, accessToken: string): Promise<ProviderProfile> {
  const get = async (path: string) => {
    const res = await client.fetchProtectedResource(
      config,
      accessToken,
      new URL(`${GITHUB_API}${path}`),
      'GET',
      null,
      new Headers({
        accept: 'application/vnd.github+json',
        'x-github-api-version': '2022-11-28',
      }),
    );
    if (res.status >= 500) throw new ProviderUnavailable(`GitHub answered ${res.status} for ${path}`);
    if (!res.ok) throw new ProviderAnswerRefused(`GitHub answered ${res.status} for ${path}`);
    return res.json();
  };
  const user = (await get('/user')) as { id?: unknown };
  const emails = (await get('/user/emails')) as { email?: unknown; primary?: unknown; verified?: unknown }[];
  if (typeof user.id !== 'number' && typeof user.id !== 'string')
    throw new ProviderAnswerRefused('GitHub /user has no id');
  const primary = Array.isArray(emails) ? emails.find((e) => e.primary === true) : undefined;
  return {
    subject: String(user.id),
    email: typeof primary?.email === 'string' ? primary.email : undefined,
    emailVerified: primary?.verified === true,
  };
}

/**
 * Turns the ways a provider can fail into ProviderUnavailable (unreachable, timeout, 5xx) so the
 * callback can say "try again later"; every other error (a refused or unverifiable answer) passes.
 */
async function guardProvider<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isUnavailable(err)) throw new ProviderUnavailable('the provider could not be reached', { cause: err });
    throw err;
  }
}

function isUnavailable(err: unknown): boolean {
  if (err instanceof ProviderUnavailable) return true;
  // fetch's own network failure (undici: "fetch failed"; refused, reset, DNS), not openid-client's argument checks
  if (err instanceof TypeError) return /fetch/i.test(err.message);
  if (err instanceof client.ResponseBodyError) return err.status >= 500;
  if (err instanceof client.ClientError) {
    if (err.code === 'OAUTH_TIMEOUT') return true;
    if (err.cause instanceof Response) return err.cause.status >= 500;
    return err.cause instanceof DOMException && err.cause.name === 'TimeoutError';
  }
  return err instanceof DOMException && (err.name === 'TimeoutError' || err.name === 'AbortError');
}
