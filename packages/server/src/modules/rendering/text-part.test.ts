import { describe, expect, it } from 'vitest';
import { htmlToText, renderTemplate } from './render.js';
import { textPart } from './text-part.js';

const direct = (source: string, vars: Record<string, unknown>) =>
  htmlToText(renderTemplate(source, vars, { html: true }));
const viaTemplate = (source: string, vars: Record<string, unknown>, linkFor = (link: string) => link) =>
  textPart(source, vars, linkFor, () => direct(source, vars));

const TEMPLATES = [
  '<h1>Hello {{firstName ?? "there"}},</h1><p>Your plan is {{data.plan}}. <a href="https://example.com/p?u={{id}}&amp;x=1">Manage it</a></p>',
  '<p>Write to <a href="mailto:{{email}}">{{email}}</a> or go <a href="#top">up</a>.</p><ul><li>{{a}}</li><li>b</li></ul>',
  '<table><tr><td>{{a}}</td><td><a href="{{unsubscribeUrl}}">Unsubscribe</a></td></tr></table><p>{{missing}}!</p>',
  '<html><head><title>{{a}}</title><style>p { color: red }</style></head><body><h2>{{a}} and {{b}}</h2></body></html>',
];
const VARS = [
  {
    firstName: 'Ann',
    data: { plan: 'pro' },
    id: 'c1',
    email: 'ann@example.com',
    a: 'x',
    b: 'y',
    unsubscribeUrl: 'https://p.example/unsubscribe/t',
  },
  {
    data: { plan: 'a & <b>' },
    id: 'c/2?',
    email: 'bob@example.com',
    a: 'Ünïcode',
    b: "it's",
    unsubscribeUrl: 'https://p.example/u?a=1&b=2',
  },
];

describe('textPart', () => {
  it('is what html-to-text makes of the rendered body, for every template and every set of values', () => {
    for (const source of TEMPLATES) {
      for (const vars of VARS) expect(viaTemplate(source, vars)).toBe(direct(source, vars));
    }
  });

  it('shows what linkFor answers for each link target, rendered and decoded, and leaves mailto and #fragments to html-to-text', () => {
    const seen: string[] = [];
    const text = viaTemplate(TEMPLATES[0] as string, VARS[0] as Record<string, unknown>, (link) => {
      seen.push(link);
      return `https://t.example/c/${seen.length}`;
    });
    expect(seen).toEqual(['https://example.com/p?u=c1&x=1']);
    expect(text).toContain('Manage it [https://t.example/c/1]');
    expect(viaTemplate(TEMPLATES[1] as string, VARS[0] as Record<string, unknown>, () => 'never')).not.toContain(
      'never',
    );
  });

  it('puts values in as text once: upper case in headings, whitespace runs as one space, a value never read as a placeholder', () => {
    const source = '<h1>Hi {{a}}</h1><p>{{b}} / {{c}}</p>';
    expect(viaTemplate(source, { a: 'ann', b: 'x\n\n  y', c: '{{a}}' })).toBe('HI ANN\n\nx y / {{a}}');
  });

  it('converts the rendered body when a placeholder sits where a token cannot stand in for it', () => {
    const source = '<p><a href="{{link ?? "https://example.com"}}">go</a> {{a}}</p>';
    const vars = { a: 'now' };
    let directCalls = 0;
    const text = textPart(
      source,
      vars,
      (l) => l,
      () => {
        directCalls++;
        return direct(source, vars);
      },
    );
    expect(directCalls).toBe(1);
    expect(text).toBe(direct(source, vars));
  });
});
