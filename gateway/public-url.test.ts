import type { Request } from 'express';
import { loadConfig } from '../common/config';
import { publicBaseUrl } from './public-url';

const request = (headers: Record<string, string>) => ({ headers: { host: 'evil.example', ...headers } }) as unknown as Request;
const own = () => 'http://localhost:4000';

describe('publicBaseUrl', () => {
  it('uses PUBLIC_URL when set, whatever the request says', () => {
    const base = publicBaseUrl(loadConfig({ PUBLIC_URL: 'https://care.example.org/api/', TRUST_PROXY: 'true' }), own);
    expect(base(request({ 'x-forwarded-host': 'proxy.example', 'x-forwarded-proto': 'http' }))).toBe('https://care.example.org/api');
  });

  it('never uses the Host header, and ignores forwarded headers unless TRUST_PROXY is on', () => {
    const base = publicBaseUrl(loadConfig({}), own);
    expect(base(request({ 'x-forwarded-host': 'proxy.example' }))).toBe('http://localhost:4000');
  });

  it('takes the first forwarded host and proto behind a trusted proxy, and refuses malformed ones', () => {
    const base = publicBaseUrl(loadConfig({ TRUST_PROXY: 'true' }), own);
    expect(base(request({ 'x-forwarded-host': 'care.example.org, inner.local', 'x-forwarded-proto': 'https, http' }))).toBe('https://care.example.org');
    expect(base(request({ 'x-forwarded-host': '[::1]:8443' }))).toBe('http://[::1]:8443');
    for (const host of ['evil.example/x', 'a@evil.example', 'evil.example?x', 'evil example', '']) {
      expect(base(request({ 'x-forwarded-host': host, 'x-forwarded-proto': 'https' }))).toBe('http://localhost:4000');
    }
    expect(base(request({ 'x-forwarded-host': 'care.example.org', 'x-forwarded-proto': 'javascript' }))).toBe('http://care.example.org');
  });
});
