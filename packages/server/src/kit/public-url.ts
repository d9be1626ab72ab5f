/**
 * Where a message's open pixel and click links point: `PUBLIC_URL`, or with a verified tracking
 * domain, `PUBLIC_URL` with its host replaced (same scheme, port and path; TLS for that host is
 * the operator's proxy's, deploy/README.md). The routes answer on any Host: the token is the credential.
 */
export function trackingBaseUrl(publicUrl: string, trackingHost: string | null | undefined): string {
  if (!trackingHost) return publicUrl;
  const url = new URL(publicUrl);
  url.hostname = trackingHost;
  return url.toString().replace(/\/+$/, '');
}
