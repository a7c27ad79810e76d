import { describe, expect, it } from 'vitest';
import { isLoopbackHostHeader, isLoopbackHostname } from './loopback-host.js';

describe('loopback Host names', () => {
  it('accepts localhost, names under it, 127.0.0.0/8 and [::1], each with an optional port', () => {
    for (const host of ['localhost', 'LOCALHOST:8011', 'app.localhost', 'a.b-c.localhost:80', '127.0.0.1', '127.0.0.1:8000', '127.255.255.254:65535', '127.1.2.3', '[::1]', '[::1]:8011']) {
      expect(isLoopbackHostHeader(host), host).toBe(true);
    }
  });

  it('refuses every other name, however it begins, and any header that is not well formed', () => {
    for (const host of [
      '127.0.0.1.attacker.example',
      '127.0.0.1.attacker.example:8011',
      'localhost.attacker.example',
      'localhost.',
      'attacker.example',
      'evil-localhost',
      '128.0.0.1',
      '127.0.0.256',
      '127.0.0.01',
      '127.1',
      '0x7f.0.0.1',
      '2130706433',
      '0.0.0.0',
      '10.0.0.1',
      '[::2]',
      '[::ffff:127.0.0.1]',
      '::1',
      '[::1]x',
      'localhost:99999',
      'localhost:80:80',
      'localhost:',
      'localhost:8o',
      '-a.localhost',
      '',
      ' localhost',
      'user@localhost',
    ]) {
      expect(isLoopbackHostHeader(host), host).toBe(false);
    }
  });

  it('reads bind addresses without brackets or port', () => {
    expect(isLoopbackHostname('::1')).toBe(true);
    expect(isLoopbackHostname('127.0.0.1')).toBe(true);
    expect(isLoopbackHostname('0.0.0.0')).toBe(false);
    expect(isLoopbackHostname('127.0.0.1.nip.io')).toBe(false);
  });
});
