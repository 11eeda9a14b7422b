/**
 * The pure rules: which webhook URLs are accepted, and how patterns match stream paths.
 */
import { checkWebhookUrl } from '../../../../src/gateway/ds/subscriptions/webhook-url';
import { globMatch, literalPrefix } from '../../../../src/gateway/ds/subscriptions/glob';

describe('webhook URL rule', () => {
  test.each([
    'http://127.0.0.1:4000/webhook',
    'http://127.9.9.9/hook',
    'http://localhost:8080/hook',
    'http://[::1]:8080/hook',
    'https://hooks.example.com/ds',
    'https://8.8.8.8/hook',
  ])('accepts %s', (url) => {
    expect(checkWebhookUrl(url, true)).toEqual({ ok: true, url: expect.any(String) });
  });

  test.each([
    'http://10.0.0.1/hook',
    'http://hooks.example.com/ds',
    'https://10.1.2.3/hook',
    'https://172.16.0.1/hook',
    'https://192.168.1.1/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://127.0.0.1/hook',
    'https://0.0.0.0/hook',
    'https://100.64.0.1/hook',
    'https://localhost/hook',
    'https://[fd00::1]/hook',
    'https://[fe80::1]/hook',
    'https://[::ffff:10.0.0.1]/hook',
    'https://user:pw@hooks.example.com/ds',
    'ftp://hooks.example.com/ds',
    'not a url',
  ])('rejects %s', (url) => {
    expect(checkWebhookUrl(url, true).ok).toBe(false);
  });

  test('loopback http is refused when the node does not allow it', () => {
    expect(checkWebhookUrl('http://127.0.0.1:4000/webhook', false).ok).toBe(false);
  });
});

describe('subscription patterns', () => {
  test.each([
    ['events/*', 'events/a', true],
    ['events/*', 'events', false],
    ['events/*', 'events/a/b', false],
    ['events/**', 'events', true],
    ['events/**', 'events/a/b', true],
    ['**', 'anything/at/all', true],
    ['a/**/z', 'a/z', true],
    ['a/**/z', 'a/b/c/z', true],
    ['a/**/z', 'a/b/c', false],
    ['*/logs', 'x/logs', true],
    ['events/a', 'events/a', true],
    ['events/a', 'events/ab', false],
  ])('%s matching %s is %s', (pattern, path, expected) => {
    expect(globMatch(pattern, path)).toBe(expected);
  });

  test('the literal prefix narrows a listing to where the pattern can match', () => {
    expect(literalPrefix('events/*')).toBe('events/');
    expect(literalPrefix('a/b/**/c')).toBe('a/b/');
    expect(literalPrefix('**')).toBe('');
    expect(literalPrefix('events/a')).toBe('events/a');
  });
});
