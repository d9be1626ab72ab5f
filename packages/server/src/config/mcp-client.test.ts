import { describe, expect, it } from 'vitest';
import { loadMcpClientConfig } from './mcp-client.js';

const key = `sk_${'ab'.repeat(32)}`;

describe('pigeon mcp configuration', () => {
  it('calls PIGEON_URL, else PUBLIC_URL, else localhost on PORT (the server’s own default)', () => {
    const both = { PIGEON_API_KEY: key, PIGEON_URL: 'https://mail.example.com/', PUBLIC_URL: 'https://x.example' };
    expect(loadMcpClientConfig(both)).toEqual({ apiKey: key, baseUrl: 'https://mail.example.com' });
    expect(loadMcpClientConfig({ PIGEON_API_KEY: key, PUBLIC_URL: 'https://x.example' }).baseUrl).toBe(
      'https://x.example',
    );
    expect(loadMcpClientConfig({ PIGEON_API_KEY: key, PORT: '8080', PIGEON_URL: '' }).baseUrl).toBe(
      'http://localhost:8080',
    );
    expect(loadMcpClientConfig({ PIGEON_API_KEY: key }).baseUrl).toBe('http://localhost:3000');
  });

  it('needs a secret key and says which variable is wrong', () => {
    expect(() => loadMcpClientConfig({})).toThrow(/PIGEON_API_KEY: Required: the secret key/);
    expect(() => loadMcpClientConfig({ PIGEON_API_KEY: `pk_${'ab'.repeat(32)}` })).toThrow(
      /PIGEON_API_KEY: Must be a project secret key/,
    );
    expect(() => loadMcpClientConfig({ PIGEON_API_KEY: key, PIGEON_URL: 'not a url' })).toThrow(/PIGEON_URL: /);
  });
});
