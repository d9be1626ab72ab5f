import { describe, expect, it } from 'vitest';
import { verifyTrackingToken } from '../rendering/links.js';
import { addTracking } from './tracking.js';

const ctx = {
  publicUrl: 'https://pigeon.example',
  trackingUrl: 'https://pigeon.example',
  secret: 's'.repeat(32),
  emailId: 'e1',
};
const target = (html: string) => {
  const token = /href="https:\/\/pigeon\.example\/t\/c\/([^"]+)"/.exec(html)?.[1] ?? '';
  return verifyTrackingToken(token, ctx.secret)?.u;
};

describe('addTracking', () => {
  it('signs the link a browser would follow: entities in the attribute are decoded once', () => {
    expect(target(addTracking('<a href="https://x.example/?a=1&amp;b=&#60;2&#62;&#x26;c">x</a>', ctx))).toBe(
      'https://x.example/?a=1&b=<2>&c',
    );
    expect(target(addTracking('<a href="https://x.example/?q=&amp;lt;">x</a>', ctx))).toBe('https://x.example/?q=&lt;');
  });

  it('leaves subscription links, other schemes and anchors alone, and adds the pixel before </body>', () => {
    const html = addTracking(
      '<body><a href="https://pigeon.example/unsubscribe/t.s">u</a><a href="mailto:a@b.c">m</a><a href="#top">t</a></body>',
      ctx,
    );
    expect(html).toContain('href="https://pigeon.example/unsubscribe/t.s"');
    expect(html).toContain('href="mailto:a@b.c"');
    expect(html).toContain('href="#top"');
    expect(html).toMatch(/<img src="https:\/\/pigeon\.example\/t\/o\/[^"]+\.gif"[^>]*><\/body>$/);
  });
});
