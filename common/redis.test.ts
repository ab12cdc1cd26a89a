import { loadConfig } from './config';
import { parseRedisUrl } from './redis';

describe('REDIS_URL', () => {
  it('takes one server as a redis:// or rediss:// URL', () => {
    expect(parseRedisUrl('redis://127.0.0.1:6379')).toEqual({ kind: 'server', url: 'redis://127.0.0.1:6379' });
    expect(parseRedisUrl('rediss://cache.example.org:6380/2')).toEqual({ kind: 'server', url: 'rediss://cache.example.org:6380/2' });
  });

  it('takes the sentinels, the master name and optionally a password and a database', () => {
    expect(parseRedisUrl('redis+sentinel://10.0.0.1:26379,sentinel-2:26380/mymaster')).toEqual({
      kind: 'sentinel',
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: 'sentinel-2', port: 26380 },
      ],
      name: 'mymaster',
    });
    expect(parseRedisUrl('redis+sentinel://:s%40cret@[::1]:26379/main/3')).toEqual({
      kind: 'sentinel',
      sentinels: [{ host: '::1', port: 26379 }],
      name: 'main',
      password: 's@cret',
      db: 3,
    });
  });

  it.each([
    ['redis+sentinel://h1:26379', /master name/],
    ['redis+sentinel://h1,h2:26379/mymaster', /'h1' is not a sentinel host:port/],
    ['redis+sentinel://h1:99999/mymaster', /not a sentinel host:port/],
    ['http://h1:6379', /must start with redis:\/\/, rediss:\/\/ or redis\+sentinel:\/\//],
  ])('refuses %s at start, saying why', (value, why) => {
    expect(() => parseRedisUrl(value)).toThrow(why);
    expect(() => loadConfig({ REDIS_URL: value })).toThrow(/REDIS_URL/);
  });

  it('reaches the configuration unchanged', () => {
    expect(loadConfig({ REDIS_URL: 'redis+sentinel://h1:26379,h2:26379/mymaster' }).REDIS_URL).toBe('redis+sentinel://h1:26379,h2:26379/mymaster');
  });
});
