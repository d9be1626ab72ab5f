import { describe, expect, it } from 'vitest';
import { htmlToText } from '../rendering/render.js';
import { composeMessage } from './compose.js';

const contact = (data: Record<string, unknown>) => ({
  id: '01900000-0000-7000-8000-000000000001',
  project_id: '01900000-0000-7000-8000-000000000002',
  email: 'ann@example.com',
  subscribed: true,
  data,
  created_at: new Date(0),
  updated_at: new Date(0),
});

const content = {
  subject: 'Hi {{firstName ?? "there"}}',
  type: 'MARKETING' as const,
  html: `<html><body><h1>Hello {{firstName ?? "there"}},</h1>
<p>Your plan is {{data.plan}}. <a href="https://example.com/launch?utm_source=newsletter&amp;plan={{data.plan}}">See what is new</a></p>
<p>Reply to <a href="mailto:help@example.com">help@example.com</a>.</p>
<p><a href="{{unsubscribeUrl}}">Unsubscribe</a></p></body></html>`,
};

const settings = (tracked: boolean) => ({
  publicUrl: 'https://pigeon.example',
  linkSecret: 'x'.repeat(40),
  tracked,
  unsubscribeMailbox: null,
});

describe('composeMessage', () => {
  // The same words in the same order; html-to-text wraps a long URL to a line of its own, the text
  // part made once per template keeps it on the line its short token was on (rendering/text-part.ts).
  const words = (text: string) => text.replace(/\s+/g, ' ');

  it("makes the text part html-to-text would make of the message's own HTML, tracked links included", () => {
    for (const tracked of [true, false]) {
      for (const data of [{ firstName: 'Ann', plan: 'pro' }, { plan: 'a & b' }]) {
        const emailId = `01900000-0000-7000-8000-00000000000${tracked ? 3 : 4}`;
        const message = composeMessage(content, contact(data), data, emailId, settings(tracked));
        expect(words(message.text)).toBe(words(htmlToText(message.html)));
        if (tracked) expect(message.text).toMatch(/\[https:\/\/pigeon\.example\/t\/c\/[^\]]+\]/);
      }
    }
  });
});
